import { createLogger } from '../../foundations/log/logger.js';
import { ApiError, ControlPlaneClient, ProjectScope } from './control-plane-client.js';
import { parseSettings, SettingsError, USAGE, wantsHelp } from './settings.js';
import { HttpListenError, type RunningMcp, serveHttp, serveStdio } from './transports.js';

export interface McpIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  /** Called when a stdio session ends by itself (the client closed stdin). */
  onEnded(): void;
}

/** Exit codes: 1 the service refused or is not there, or the HTTP port cannot be had; 2 a wrong command line or setting. */
export const EXIT = { ok: 0, refused: 1, usage: 2 } as const;

export type StartOutcome = { exitCode: number } | { running: RunningMcp };

/**
 * Reads the settings, checks them against the control plane, then serves. Anything wrong ends here with one
 * line on stderr and an exit code, before a single byte of protocol is written.
 */
export async function startMcp(argv: readonly string[], io: McpIo): Promise<StartOutcome> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return { exitCode: EXIT.ok };
  }
  const fail = (code: number, message: string): StartOutcome => {
    io.stderr(`flagops-mcp: ${message}\n`);
    return { exitCode: code };
  };

  let settings: ReturnType<typeof parseSettings>;
  try {
    settings = parseSettings(argv, io.env);
  } catch (err) {
    if (err instanceof SettingsError) return fail(EXIT.usage, err.message);
    throw err;
  }
  const logger = createLogger({ level: settings.logLevel, write: io.stderr, base: { service: 'flagops-mcp' } });
  if (settings.agentKey.startsWith('svc_adm_')) {
    logger.warn('FLAGOPS_AGENT_KEY is an admin key: the agent may do everything an admin may, promote into prod included');
  }
  const api = new ControlPlaneClient({ baseUrl: settings.baseUrl, key: settings.agentKey, timeoutMs: settings.timeoutMs });
  const scope = new ProjectScope(api, settings.projectSlug);
  try {
    await preflight(scope, settings.baseUrl);
  } catch (err) {
    if (err instanceof PreflightError) return fail(EXIT.refused, err.message);
    throw err;
  }

  const deps = { scope, logger };
  if (settings.http) {
    try {
      return { running: await serveHttp(deps, settings.http) };
    } catch (err) {
      if (err instanceof HttpListenError) return fail(EXIT.refused, err.message);
      throw err;
    }
  }
  return { running: await serveStdio(deps, io.onEnded) };
}

/** The service said no, or is not there: the server must not start pretending to work. */
export class PreflightError extends Error {
  override name = 'PreflightError';
}

/**
 * One cheap call before serving (GET /api/v1/projects): it proves the URL reaches a flagops control plane,
 * the key is accepted and the project exists. An MCP client shows a server that exits at start with its
 * stderr; a server that starts anyway would only fail later, on an agent's first call, with less context.
 * The same failures can still happen later (a revoked key, a stopped service): each tool then reports them.
 */
export async function preflight(scope: ProjectScope, baseUrl: string): Promise<void> {
  try {
    await scope.projectId();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    switch (err.code) {
      case 'unreachable':
      case 'timeout':
      case 'connection_lost':
        throw new PreflightError(`${err.message}; is flagops running and FLAGOPS_URL right?`);
      case 'unauthorized':
        throw new PreflightError(
          `FLAGOPS_AGENT_KEY was refused by the control plane at ${baseUrl} (401 unauthorized: ${err.message}); is it a valid, unrevoked agent key?`,
        );
      case 'bad_response':
        throw new PreflightError(`FLAGOPS_URL ${baseUrl} does not answer like a flagops control plane (${err.message})`);
      case 'not_found':
        throw new PreflightError(err.message);
      default:
        throw new PreflightError(`the control plane at ${baseUrl} refused the start check: ${err.code}: ${err.message}`);
    }
  }
}
