import path from 'node:path';
import { type LogLevel, logLevelFrom } from '../log/logger.js';
import { type OidcConfig, parseOidcSettings } from './oidc-settings.js';

/** Runtime settings, all from the environment with defaults that work with zero configuration (docs/deployment.md). */
export interface Config {
  dataDir: string;
  host: string;
  controlPort: number;
  evalPort: number;
  bootstrapKeys: Array<{ org: string; key: string }>;
  planProjectLimit: number;
  logLevel: LogLevel;
  /** FLAGOPS_GIT_GC_COMMITS: run `git gc --auto` after this many commits (packs are rolled up every 50); 0: never pack. Default 1000. */
  gitGcCommits?: number;
  /** FLAGOPS_COMMIT_SIGNING_KEY: the key the service signs its commits with; default a key kept in `<dataDir>/state`. */
  commitSigningKey?: string;
  /** FLAGOPS_GIT_MAX_PROCESSES and FLAGOPS_GIT_QUEUE: git over HTTP processes run at once, and requests waiting for one. */
  gitProcesses?: { max: number; queue: number };
  /**
   * FLAGOPS_TRUST_PROXY: how many reverse proxies stand in front of both ports; their X-Forwarded-For (the
   * client's address), -Proto and -Host are believed. 0 (the default): none, the headers are ignored.
   */
  trustProxy?: number;
  /** FLAGOPS_METRICS and FLAGOPS_METRICS_TOKEN (docs/operations.md); absent: metrics on, /metrics open. */
  metrics?: MetricsSettings;
  /**
   * FLAGOPS_DATABASE_URL: a PostgreSQL connection string; the control plane's state lives in that database,
   * shared by every control plane given it. Absent: files in the data directory.
   */
  databaseUrl?: string;
  /** Remote mode (docs/deployment.md): FLAGOPS_GIT_REMOTE and friends; absent when not set. */
  gitRemote?: { url: string; org?: string; webhookSecret?: string; pollSeconds: number; pushTimeoutSeconds?: number };
  /**
   * FLAGOPS_PROMETHEUS_URL: the Prometheus server (its origin and path prefix, e.g. http://prometheus:9090)
   * whose HTTP API the guards of scheduled steps query; absent: guards cannot be checked.
   */
  prometheusUrl?: string;
  /** Single sign-on (FLAGOPS_OIDC_*): the settings, or what is wrong with them; absent when not set. */
  oidc?: OidcConfig;
}

export class ConfigError extends Error {}

function port(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new ConfigError(`${name} must be a port number 0..65535, got ${JSON.stringify(value)}`);
  return n;
}

/** FLAGOPS_TRUST_PROXY: a number of proxies; `true` is one, `false` or empty none. */
export function parseTrustProxy(value: string | undefined): number {
  const text = (value ?? '').trim().toLowerCase();
  if (text === '' || text === 'false') return 0;
  if (text === 'true') return 1;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 16) {
    throw new ConfigError(
      `FLAGOPS_TRUST_PROXY must be the number of reverse proxies in front of flagops (0 for none, 1 for one), got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

/** FLAGOPS_METRICS (`on`, the default, or `off`) and FLAGOPS_METRICS_TOKEN; a replica reads them too. */
/** FLAGOPS_METRICS and FLAGOPS_METRICS_TOKEN. */
export interface MetricsSettings {
  /** FLAGOPS_METRICS=off: no /metrics, no counting, no timing (for comparing against metrics on). */
  enabled: boolean;
  /** FLAGOPS_METRICS_TOKEN: when set, /metrics needs `Authorization: Bearer <token>`. */
  token?: string;
}

export function parseMetricsSettings(env: NodeJS.ProcessEnv): MetricsSettings {
  const value = (env.FLAGOPS_METRICS ?? '').trim().toLowerCase();
  if (!['', 'on', 'off'].includes(value))
    throw new ConfigError(`FLAGOPS_METRICS must be on or off, got ${JSON.stringify(env.FLAGOPS_METRICS)}`);
  return { enabled: value !== 'off', ...(env.FLAGOPS_METRICS_TOKEN ? { token: env.FLAGOPS_METRICS_TOKEN } : {}) };
}

export function parseBootstrapKeys(value: string | undefined): Array<{ org: string; key: string }> {
  if (!value) return [];
  return value
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair, i) => {
      const colon = pair.indexOf(':');
      // Named by its place, not shown: the entry holds a secret key.
      if (colon <= 0 || colon === pair.length - 1)
        throw new ConfigError(`FLAGOPS_BOOTSTRAP_KEYS entry ${i + 1} is not org:key (an organisation, ":", then its admin key)`);
      return { org: pair.slice(0, colon), key: pair.slice(colon + 1) };
    });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const limit = env.FLAGOPS_PLAN_PROJECT_LIMIT;
  const planProjectLimit = limit === undefined || limit === '' ? 25 : Number(limit);
  if (!Number.isInteger(planProjectLimit) || planProjectLimit < 0)
    throw new ConfigError('FLAGOPS_PLAN_PROJECT_LIMIT must be a whole number');
  const gc = env.FLAGOPS_GIT_GC_COMMITS;
  const gitGcCommits = gc === undefined || gc === '' ? 1000 : Number(gc);
  if (!Number.isInteger(gitGcCommits) || gitGcCommits < 0)
    throw new ConfigError('FLAGOPS_GIT_GC_COMMITS must be a whole number of commits (0: never pack)');
  const logLevel = logLevelFrom(env.FLAGOPS_LOG_LEVEL);
  if (logLevel === null) throw new ConfigError('FLAGOPS_LOG_LEVEL must be debug, info, warn or error');
  return {
    dataDir: path.resolve(env.FLAGOPS_DATA_DIR || './data'),
    host: env.FLAGOPS_HOST || '127.0.0.1',
    controlPort: port('FLAGOPS_CONTROL_PORT', env.FLAGOPS_CONTROL_PORT, 4000),
    evalPort: port('FLAGOPS_EVAL_PORT', env.FLAGOPS_EVAL_PORT, 4001),
    bootstrapKeys: parseBootstrapKeys(env.FLAGOPS_BOOTSTRAP_KEYS),
    planProjectLimit,
    gitGcCommits,
    logLevel,
    ...(env.FLAGOPS_COMMIT_SIGNING_KEY ? { commitSigningKey: signingKey(env.FLAGOPS_COMMIT_SIGNING_KEY) } : {}),
    gitProcesses: { max: count(env, 'FLAGOPS_GIT_MAX_PROCESSES', 4, 1), queue: count(env, 'FLAGOPS_GIT_QUEUE', 16, 0) },
    trustProxy: parseTrustProxy(env.FLAGOPS_TRUST_PROXY),
    metrics: parseMetricsSettings(env),
    ...(env.FLAGOPS_DATABASE_URL ? { databaseUrl: databaseUrl(env.FLAGOPS_DATABASE_URL) } : {}),
    ...(env.FLAGOPS_PROMETHEUS_URL ? { prometheusUrl: prometheusUrl(env.FLAGOPS_PROMETHEUS_URL) } : {}),
    ...(env.FLAGOPS_GIT_REMOTE ? { gitRemote: gitRemoteSettings(env, env.FLAGOPS_GIT_REMOTE) } : {}),
    ...optional('oidc', parseOidcSettings(env)),
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** The message never repeats the value: a mistyped connection string may still hold a password. */
function databaseUrl(value: string): string {
  if (!/^postgres(ql)?:\/\/[^/]/.test(value)) {
    throw new ConfigError('FLAGOPS_DATABASE_URL must be a PostgreSQL connection string: postgres://user:password@host:5432/database');
  }
  return value;
}

/** The message never repeats the value: a URL may hold basic-auth credentials (http://user:password@prometheus:9090). */
function prometheusUrl(value: string): string {
  const url = URL.canParse(value) ? new URL(value) : null;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new ConfigError('FLAGOPS_PROMETHEUS_URL must be an http(s) URL such as http://127.0.0.1:9090');
  return value;
}

function signingKey(value: string): string {
  if (Buffer.byteLength(value) < 32)
    throw new ConfigError('FLAGOPS_COMMIT_SIGNING_KEY must have at least 32 characters (e.g. openssl rand -hex 32)');
  return value;
}

function count(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name} must be a whole number of at least ${min}`);
  return n;
}

/** Whether git could use `value` as a remote: a URL of a transport git has, `host:path`, a path, or `<helper>::<address>`. */
function isGitRemote(value: string): boolean {
  if ([...value].some((c) => c.charCodeAt(0) < 32)) return false; // a line break or control character
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(value);
  if (scheme) {
    if (!['http', 'https', 'ssh', 'git', 'file'].includes(scheme[1].toLowerCase())) return false;
    try {
      const url = new URL(value);
      return url.host !== '' || url.protocol === 'file:';
    } catch {
      return false;
    }
  }
  const helper = /^(.*?)::/.exec(value);
  if (helper) return /^[A-Za-z0-9][A-Za-z0-9+.-]*$/.test(helper[1]) && value.length > helper[0].length;
  return true; // host:path, or a path on this machine
}

/** Remote mode's settings from FLAGOPS_GIT_REMOTE (`url`) and the rest of `env`; ConfigError for one that cannot work. */
export function gitRemoteSettings(env: NodeJS.ProcessEnv, url: string): NonNullable<Config['gitRemote']> {
  if (!isGitRemote(url))
    throw new ConfigError(
      'FLAGOPS_GIT_REMOTE must be a git remote: https://host/flags.git, ssh://git@host/flags.git, git@host:flags.git or a path',
    );
  const poll = env.FLAGOPS_GIT_POLL_SECONDS;
  const pollSeconds = poll === undefined || poll === '' ? 30 : Number(poll);
  if (!Number.isFinite(pollSeconds) || pollSeconds < 0)
    throw new ConfigError('FLAGOPS_GIT_POLL_SECONDS must be a number of seconds (0: no polling)');
  // Below the 30 s after which the database ends a turn held that long: the push gives up first, with its error.
  const timeout = env.FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS;
  const pushTimeoutSeconds = timeout === undefined || timeout === '' ? undefined : Number(timeout);
  if (pushTimeoutSeconds !== undefined && !(Number.isFinite(pushTimeoutSeconds) && pushTimeoutSeconds > 0 && pushTimeoutSeconds <= 25))
    throw new ConfigError('FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS must be a number of seconds above 0, at most 25');
  return {
    url,
    org: env.FLAGOPS_GIT_REMOTE_ORG || undefined,
    webhookSecret: env.FLAGOPS_GIT_WEBHOOK_SECRET || undefined,
    pollSeconds,
    ...(pushTimeoutSeconds === undefined ? {} : { pushTimeoutSeconds }),
  };
}
