/** The client's options with every default filled in, and the defaults themselves: console, timers, fetch. */
import type { ClientOptions, FetchFunction, Scheduler, SdkLogger } from './types.js';

const PREFIX = '[flagops]';

/** Warnings and errors to the console when there is one (browsers, Node); never anything else. */
export const consoleLogger: SdkLogger = {
  warn: (message, fields) => {
    if (typeof console !== 'undefined') console.warn(PREFIX, message, fields ?? '');
  },
  error: (message, fields) => {
    if (typeof console !== 'undefined') console.error(PREFIX, message, fields ?? '');
  },
};

/** A logger that drops everything (for tests and for callers who log elsewhere). */
export const silentSdkLogger: SdkLogger = { warn: () => {}, error: () => {} };

/** The platform's timers, looked up when called so that a test or a page can replace them. */
export const realScheduler: Scheduler = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface ResolvedOptions {
  evalUrl: string;
  sdkKey: string;
  mode: 'local' | 'remote';
  pollIntervalMs: number;
  stream: boolean;
  fetch: FetchFunction;
  logger: SdkLogger;
  readyTimeoutMs: number;
  requestTimeoutMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
  streamIdleTimeoutMs: number;
  countsIntervalMs: number;
  sendCounts: boolean;
  sendExposures: boolean;
  eventsIntervalMs: number;
  eventsMaxBatch: number;
  remoteCacheSize: number;
  random: () => number;
  scheduler: Scheduler;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new TypeError(`flagops: ${name} must be a positive number of milliseconds`);
  return value;
}

function batchSize(value: number | undefined): number {
  if (value === undefined) return 500;
  if (!Number.isInteger(value) || value < 1 || value > 1000)
    throw new TypeError('flagops: eventsMaxBatch must be a whole number from 1 to 1000');
  return value;
}

/** The global fetch, looked up at call time and called on globalThis (browsers refuse a detached fetch). */
const globalFetch: FetchFunction = (input, init) => globalThis.fetch(input, init);

/**
 * Fills in defaults (the bootstrap snapshot is not kept here: the client compiles it and lets it go). Wrong options are a programming error found at start, so this is the one place the SDK
 * throws (a TypeError); evaluation never does.
 */
export function resolveOptions(options: ClientOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('flagops: createClient needs { evalUrl, sdkKey }');
  if (typeof options.evalUrl !== 'string' || !/^https?:\/\//.test(options.evalUrl))
    throw new TypeError('flagops: evalUrl must be an http(s) URL');
  if (typeof options.sdkKey !== 'string' || options.sdkKey === '') throw new TypeError('flagops: sdkKey is required');
  const mode = options.mode ?? 'local';
  if (mode !== 'local' && mode !== 'remote') throw new TypeError("flagops: mode must be 'local' or 'remote'");
  if (mode === 'remote' && options.bootstrap !== undefined) throw new TypeError('flagops: bootstrap is for local mode');
  return {
    evalUrl: options.evalUrl,
    sdkKey: options.sdkKey,
    mode,
    pollIntervalMs: positive('pollIntervalMs', options.pollIntervalMs, 30_000),
    stream: options.stream ?? true,
    fetch: options.fetch ?? globalFetch,
    logger: options.logger ?? consoleLogger,
    readyTimeoutMs: positive('readyTimeoutMs', options.readyTimeoutMs, 5_000),
    requestTimeoutMs: positive('requestTimeoutMs', options.requestTimeoutMs, 10_000),
    retryInitialMs: positive('retryInitialMs', options.retryInitialMs, 1_000),
    retryMaxMs: positive('retryMaxMs', options.retryMaxMs, 10_000),
    streamIdleTimeoutMs: positive('streamIdleTimeoutMs', options.streamIdleTimeoutMs, 60_000),
    countsIntervalMs: positive('countsIntervalMs', options.countsIntervalMs, 10_000),
    sendCounts: options.sendCounts ?? true,
    sendExposures: options.sendExposures ?? false,
    eventsIntervalMs: positive('eventsIntervalMs', options.eventsIntervalMs, 10_000),
    eventsMaxBatch: batchSize(options.eventsMaxBatch),
    remoteCacheSize: positive('remoteCacheSize', options.remoteCacheSize, 10_000),
    random: options.random ?? Math.random,
    scheduler: options.scheduler ?? realScheduler,
  };
}
