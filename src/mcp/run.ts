import { createLogger } from '../log/logger.js';
import { ControlPlaneClient } from './api/control-plane-client.js';
import { ProjectScope } from './api/project-scope.js';
import { PreflightError, preflight } from './preflight.js';
import { parseSettings, SettingsError, wantsHelp } from './settings.js';
import { serveHttp } from './transports/http.js';
import type { RunningMcp } from './transports/running.js';
import { serveStdio } from './transports/stdio.js';
import { USAGE } from './usage.js';

export interface McpIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  /** Called when a stdio session ends by itself (the client closed stdin). */
  onEnded(): void;
}

/** Exit codes: 1 the service refused or is not there, 2 a wrong command line or setting. */
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
  if (settings.http) return { running: await serveHttp(deps, settings.http) };
  return { running: await serveStdio(deps, io.onEnded) };
}
