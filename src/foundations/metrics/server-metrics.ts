import { createHash, timingSafeEqual } from 'node:crypto';
import { Counter, collectDefaultMetrics, Registry } from 'prom-client';
import { authFailureCounts } from '../auth/auth-guard.js';
import { refusedConnectionCounts } from '../http/connection-limits.js';
import { bodyBytesByCoding } from '../http/content-encoding.js';
import { CheapHistogram } from './cheap-histogram.js';

/** Which server a registry belongs to: the `server` label of the HTTP family. */
export type ServerName = 'control' | 'evaluation' | 'replica';

/** Request durations in seconds: from a fast-path evaluate (well under a millisecond) to a slow push. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Observe = (seconds: number) => void;

/**
 * The Prometheus registry of one server (control port, evaluation port, a replica): the HTTP and process
 * families every server has, plus whatever families the server's parts register on `registry`.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly requestDuration: CheapHistogram;
  /** route → status → the histogram series' observe: two Map lookups per request. */
  private readonly observers = new Map<string, Map<number, Observe>>();
  private readonly tokenDigest: Buffer | undefined;

  constructor(
    readonly server: ServerName,
    token?: string,
  ) {
    this.tokenDigest = token === undefined ? undefined : digest(token);
    collectDefaultMetrics({ register: this.registry });
    this.requestDuration = new CheapHistogram(
      'flagops_http_request_duration_seconds',
      'HTTP requests answered, by server, route pattern and status.',
      ['server', 'route', 'status'],
      HTTP_BUCKETS,
      this.registry,
    );
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
    new Counter({
      name: 'flagops_snapshot_body_bytes_total',
      help: 'Body bytes of snapshots, OFREP bulk evaluations and replica feed views sent by this process, by content encoding (br, gzip, identity).',
      labelNames: ['encoding'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [encoding, bytes] of Object.entries(bodyBytesByCoding())) this.inc({ encoding }, bytes);
      },
    });
    new Counter({
      name: 'flagops_connections_refused_total',
      help: 'Connections closed as soon as accepted because their port held its cap of open connections, by port (server).',
      labelNames: ['server'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [server, count] of Object.entries(refusedConnectionCounts())) this.inc({ server }, count);
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
      observe = this.requestDuration.observer(this.server, route, String(status));
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
