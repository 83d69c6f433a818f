import type { LogLevel } from '../../foundations/log/logger.js';

export interface HttpSettings {
  host: string;
  port: number;
  /** When set, every HTTP request must carry `Authorization: Bearer <token>`. */
  token?: string;
}

export interface Settings {
  baseUrl: string;
  agentKey: string;
  projectSlug: string;
  timeoutMs: number;
  logLevel: LogLevel;
  /** Absent: stdio. */
  http?: HttpSettings;
}

/** A setting or argument that cannot work; the message names it and says what is expected. */
export class SettingsError extends Error {
  override name = 'SettingsError';
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
export const DEFAULT_HTTP_PORT = 4002;
const DEFAULT_TIMEOUT_MS = 10_000;

type Env = Readonly<Record<string, string | undefined>>;

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** `--help` wins over everything, so help works even with no environment at all. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/** The command line and environment, checked up front: a wrong setting stops the start, never a later call. */
export function parseSettings(argv: readonly string[], env: Env): Settings {
  const args = parseArgs(argv);
  const baseUrl = controlPlaneUrl(required(env, 'FLAGOPS_URL'));
  const agentKey = required(env, 'FLAGOPS_AGENT_KEY');
  if (agentKey.startsWith('svc_sdk_')) {
    throw new SettingsError(
      'FLAGOPS_AGENT_KEY is an SDK key (svc_sdk_...), which only reads the evaluation API; give an agent key (svc_agt_...)',
    );
  }
  const projectSlug = required(env, 'FLAGOPS_PROJECT');
  if (!SLUG.test(projectSlug))
    throw new SettingsError(`FLAGOPS_PROJECT must be a project slug (${SLUG.source}), got ${JSON.stringify(projectSlug)}`);
  const settings: Settings = {
    baseUrl,
    agentKey,
    projectSlug,
    timeoutMs: timeout(env.FLAGOPS_TIMEOUT_MS),
    logLevel: logLevel(env.FLAGOPS_LOG_LEVEL),
  };
  if (args.http) {
    const token = env.FLAGOPS_MCP_TOKEN || undefined;
    // Whoever reaches the port acts with the agent key: off loopback that must not be anyone on the network.
    if (!isLoopback(args.host) && token === undefined) {
      throw new SettingsError(
        `--host ${args.host} is not a loopback address: set FLAGOPS_MCP_TOKEN so that only clients with the token can use the agent key`,
      );
    }
    settings.http = { host: args.host, port: args.port, token };
  }
  return settings;
}

function parseArgs(argv: readonly string[]): { http: boolean; host: string; port: number } {
  let http = false;
  let host: string | undefined;
  let port: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new SettingsError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--http' && inline === undefined) http = true;
    else if (flag === '--host') host = value();
    else if (flag === '--port') {
      const raw = value();
      port = Number(raw);
      if (!/^\d+$/.test(raw) || port > 65535) throw new SettingsError(`--port must be a port number 0..65535, got ${JSON.stringify(raw)}`);
    } else throw new SettingsError(`unknown argument ${JSON.stringify(arg)} (see --help)`);
  }
  if (!http && (host !== undefined || port !== undefined)) throw new SettingsError('--host and --port only apply with --http');
  return { http, host: host ?? '127.0.0.1', port: port ?? DEFAULT_HTTP_PORT };
}

function required(env: Env, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new SettingsError(`${name} is not set (see --help)`);
  return value;
}

/** An http(s) origin; a trailing /api/v1 is the most likely slip, so it gets its own message. */
function controlPlaneUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SettingsError(`FLAGOPS_URL is not a URL: ${JSON.stringify(raw)} (expected e.g. http://127.0.0.1:4000)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new SettingsError(`FLAGOPS_URL must be http:// or https://, got ${JSON.stringify(raw)}`);
  if (/\/api\/v1\/?$/.test(url.pathname)) throw new SettingsError(`FLAGOPS_URL must be the origin without /api/v1, e.g. ${url.origin}`);
  if (url.search || url.hash || url.username || url.password) {
    url.username = url.username ? '***' : '';
    url.password = url.password ? '***' : '';
    throw new SettingsError(`FLAGOPS_URL must not carry a query, fragment or credentials: ${JSON.stringify(url.href)}`);
  }
  return url.origin + url.pathname.replace(/\/+$/, '');
}

function timeout(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_TIMEOUT_MS;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 600_000)
    throw new SettingsError(`FLAGOPS_TIMEOUT_MS must be a whole number of milliseconds from 1 to 600000, got ${JSON.stringify(raw)}`);
  return n;
}

function logLevel(raw: string | undefined): LogLevel {
  if (raw === undefined || raw === '') return 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw))
    throw new SettingsError(`FLAGOPS_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as LogLevel;
}

export const USAGE = `flagops-mcp: the flagops control plane as MCP tools for AI agents

Usage:
  flagops-mcp                                  speak MCP over stdio (for a local MCP client)
  flagops-mcp --http [--port N] [--host H]     serve MCP over Streamable HTTP at http://H:N/mcp
  flagops-mcp --help

Options:
  --http         Streamable HTTP instead of stdio (stateless: every POST /mcp stands alone)
  --port N       HTTP port (default 4002; 0 picks a free one, logged on stderr)
  --host H       HTTP interface (default 127.0.0.1); any other than loopback needs FLAGOPS_MCP_TOKEN
  -h, --help     this text

Environment:
  FLAGOPS_URL          required: the control plane's origin, e.g. http://127.0.0.1:4000 (without /api/v1)
  FLAGOPS_AGENT_KEY    required: an agent key (svc_agt_...); every change is audited under its prefix
  FLAGOPS_PROJECT      required: the slug of the project the tools act on
  FLAGOPS_TIMEOUT_MS   optional: per control-plane request (default 10000)
  FLAGOPS_MCP_TOKEN    optional: with --http, clients must send "Authorization: Bearer <token>"
  FLAGOPS_LOG_LEVEL    optional: debug, info (default), warn or error; logs are JSON lines on stderr

At start it checks the settings with one request to the control plane and exits 1 with a message on
stderr when the URL is unreachable, the key is refused or the project does not exist; exit 2 is a wrong
command line or setting. See docs/mcp.md.
`;
