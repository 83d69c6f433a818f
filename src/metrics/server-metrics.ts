import { createHash, timingSafeEqual } from 'node:crypto';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { authFailureCounts } from '../auth/auth-failures.js';
import { ConfigError } from '../config/config.js';

/** Which server a registry belongs to: the `server` label of the HTTP family. */
export type ServerName = 'control' | 'evaluation' | 'replica';

/** FLAGOPS_METRICS and FLAGOPS_METRICS_TOKEN. */
export interface MetricsSettings {
  /** FLAGOPS_METRICS=off: no /metrics, no counting, no timing (for comparing against metrics on). */
  enabled: boolean;
  /** FLAGOPS_METRICS_TOKEN: when set, /metrics needs `Authorization: Bearer <token>`. */
  token?: string;
}

export function metricsSettings(env: NodeJS.ProcessEnv = process.env): MetricsSettings {
  const value = (env.FLAGOPS_METRICS ?? 'on').trim().toLowerCase();
  if (!['on', 'off', 'true', 'false', ''].includes(value))
    throw new ConfigError(`FLAGOPS_METRICS must be on or off, got ${JSON.stringify(env.FLAGOPS_METRICS)}`);
  const enabled = value !== 'off' && value !== 'false';
  return { enabled, ...(env.FLAGOPS_METRICS_TOKEN ? { token: env.FLAGOPS_METRICS_TOKEN } : {}) };
}

/** Request durations in seconds: from a fast-path evaluate (well under a millisecond) to a slow push. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Observe = (seconds: number) => void;

/**
 * The Prometheus registry of one server (control port, evaluation port, a replica): the HTTP and process
 * families every server has, plus whatever families the server's parts register on `registry`.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly requestDuration: Histogram<'server' | 'route' | 'status'>;
  /** route → status → the histogram's child: one Map lookup per request instead of hashing label objects. */
  private readonly observers = new Map<string, Map<number, Observe>>();
  private readonly tokenDigest: Buffer | undefined;

  constructor(
    readonly server: ServerName,
    token?: string,
  ) {
    this.tokenDigest = token === undefined ? undefined : digest(token);
    collectDefaultMetrics({ register: this.registry });
    this.requestDuration = new Histogram({
      name: 'flagops_http_request_duration_seconds',
      help: 'HTTP requests answered, by server, route pattern and status.',
      labelNames: ['server', 'route', 'status'] as const,
      buckets: HTTP_BUCKETS,
      registers: [this.registry],
    });
    new Counter({
      name: 'flagops_auth_failures_total',
      help: 'Failed authentications in this process: kind api_key (a wrong key), password (dashboard sign-in) or rate_limited (refused unchecked).',
      labelNames: ['kind'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [kind, count] of Object.entries(authFailureCounts())) this.inc({ kind }, count);
      },
    });
  }

  /** Records one answered request; `startedAt` is performance.now() when it arrived. */
  observeRequest(route: string, status: number, startedAt: number): void {
    let byStatus = this.observers.get(route);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.observers.set(route, byStatus);
    }
    let observe = byStatus.get(status);
    if (observe === undefined) {
      const child = this.requestDuration.labels(this.server, route, String(status));
      observe = (seconds) => child.observe(seconds);
      byStatus.set(status, observe);
    }
    observe((performance.now() - startedAt) / 1000);
  }

  /** Whether an `Authorization` header may read /metrics: always when no token is set. */
  allows(authorization: string | undefined): boolean {
    if (this.tokenDigest === undefined) return true;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    return match !== null && timingSafeEqual(digest(match[1]), this.tokenDigest);
  }

  /** The Prometheus text exposition of every family of this server. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** Compared as digests, so the comparison takes the same time whatever the length of what was sent. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
