import type { EvaluationContext, JsonValue, Reason, Snapshot } from '@flagops/core';

export type { EvaluationContext, JsonValue, Reason, Snapshot };

/**
 * - `not_ready`: nothing loaded yet and nothing failed yet
 * - `ready`: serving what the server serves
 * - `stale`: serving the last good data; the server cannot be reached, retrying with backoff
 * - `error`: nothing to serve, or the server refused the SDK key (it will not fix itself)
 */
export type ClientStatus = 'not_ready' | 'ready' | 'stale' | 'error';

/** OpenFeature's error codes (openfeature.dev/specification/types#error-code), the ones the SDK can meet. */
export type EvaluationErrorCode = 'FLAG_NOT_FOUND' | 'TYPE_MISMATCH' | 'PROVIDER_NOT_READY' | 'INVALID_CONTEXT' | 'GENERAL';

/** An evaluation result (docs/evaluation.md) as the caller gets it: with `reason: 'error'` it holds the caller's default. */
export interface EvaluationDetails<T = JsonValue> {
  value: T;
  reason: Reason;
  /** `on`, `off`, `default` or the name of the variant served; absent on errors. */
  variation?: string;
  ruleId?: string;
  bucket?: number;
  /** When a variant was picked by the user's variant bucket. */
  variantBucket?: number;
  /** With reason `prerequisite_failed`: the prerequisite flag that did not serve its variation. */
  prerequisiteKey?: string;
  errorCode?: EvaluationErrorCode;
  errorMessage?: string;
}

/** `false` → `boolean`, `'x'` → `string`, `3` → `number`: what details() answers for a default of that type. */
export type Widen<T> = T extends boolean ? boolean : T extends string ? string : T extends number ? number : T;

export interface ChangeEvent {
  /** Local mode: the flags whose snapshot entry was added, changed or removed. Remote mode: see docs/sdk.md. */
  keys: string[];
  version: number;
}

export interface StatusEvent {
  status: ClientStatus;
  previous: ClientStatus;
  /** Why, when the new status comes from a failure. */
  error?: string;
}

export interface ClientEvents {
  change: ChangeEvent;
  status: StatusEvent;
}

export interface SdkLogger {
  debug?(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Timers and clock, injectable so that tests control time. Handles are opaque. */
export interface Scheduler {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export type FetchFunction = (input: string, init?: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** The evaluation API's origin, e.g. `http://127.0.0.1:4001`. */
  evalUrl: string;
  /** An SDK key (`svc_sdk_…`): it fixes the project and the environment. */
  sdkKey: string;
  /** `local` (default): fetch the snapshot, evaluate in process. `remote`: ask POST /v1/evaluate, cache the answers. */
  mode?: 'local' | 'remote';
  /** How often to check for a new snapshot when no stream is connected. Default 30 000. */
  pollIntervalMs?: number;
  /** Listen on GET /v1/stream for new versions; polling takes over while it is down. Default true. */
  stream?: boolean;
  /** A snapshot to start from (e.g. rendered into the page): ready at once, refreshed in the background. Local mode. */
  bootstrap?: Snapshot;
  /** Default: the global fetch. */
  fetch?: FetchFunction;
  /** Default: warnings and errors to the console. */
  logger?: SdkLogger;
  /** How long `ready()` waits at most before resolving with the status it has. Default 5 000. */
  readyTimeoutMs?: number;
  /** Each request is abandoned after this long. Default 10 000. */
  requestTimeoutMs?: number;
  /** First retry delay after a failure; doubles each time, with jitter. Default 1 000. */
  retryInitialMs?: number;
  /** Longest retry delay: after an outage of the server, changes (a kill included) reach the client within this long of its return. Default 10 000. */
  retryMaxMs?: number;
  /** A stream that sends nothing (not even a heartbeat) for this long is considered dead. Default 60 000. */
  streamIdleTimeoutMs?: number;
  /** Local mode: send evaluation counts to POST /v1/counts this often (and on close). Default 10 000. */
  countsIntervalMs?: number;
  /** Local mode: count evaluations and report them. Default true. */
  sendCounts?: boolean;
  /**
   * Send an exposure event (POST /v1/events) for the evaluations the application is given: one per flag,
   * variation and user per send. For experiments and the sample-ratio check. Default false.
   */
  sendExposures?: boolean;
  /** Send waiting events (exposures and `track`) this often, and on close. Default 10 000. */
  eventsIntervalMs?: number;
  /** Send at once when this many events are waiting; at most 1 000 go in one request. Default 500. */
  eventsMaxBatch?: number;
  /** Remote mode: at most this many cached results. Default 10 000. */
  remoteCacheSize?: number;
  /** For tests: a number in [0, 1) (jitter). Default Math.random. */
  random?: () => number;
  /** For tests: timers and clock. */
  scheduler?: Scheduler;
}
