/**
 * Every request the SDK makes to the evaluation API: the SDK key, deadlines, aborting on close, the errors a
 * response becomes, and the snapshot requests (GET and HEAD /v1/snapshot with If-None-Match).
 */
import type { Snapshot } from '@flagops/core';
import type { FetchFunction, Scheduler } from './types.js';

/** The server answered with a status the SDK cannot use. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Retry-After, in ms, when sent. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/**
 * Whether the server refused the key (401, 403): retrying cannot fix that soon, so the SDK reports `error` at
 * once and retries slowly. A 404 is not one: a server that is starting answers it until its snapshots load.
 */
export function isRefusal(err: unknown): boolean {
  return err instanceof HttpError && (err.status === 401 || err.status === 403);
}

const CONNECTION_LOST = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/** Whether the connection was refused or reset (nothing listens: a restart). fetch puts it in `cause`. */
export function isConnectionLost(err: unknown): boolean {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    const { code, errors, cause } = e as { code?: unknown; errors?: unknown; cause?: unknown };
    if (typeof code === 'string' && CONNECTION_LOST.has(code)) return true;
    if (Array.isArray(errors) && errors.some(isConnectionLost)) return true;
    e = cause;
  }
  return false;
}

export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An HttpError from a response, with the server's own message when it sent an error body `{ error: { message } }`. */
export async function httpError(res: Response, what: string): Promise<HttpError> {
  let detail = '';
  try {
    const body = (await res.json()) as { error?: { message?: unknown } };
    if (typeof body?.error?.message === 'string') detail = `: ${body.error.message}`;
  } catch {
    // no JSON body: the status says enough
  }
  const retryAfter = /^\s*(\d+)\s*$/.exec(res.headers.get('retry-after') ?? '');
  return new HttpError(res.status, `${what} answered ${res.status}${detail}`, retryAfter ? Number(retryAfter[1]) * 1000 : undefined);
}

export interface HttpOptions {
  evalUrl: string;
  sdkKey: string;
  fetch: FetchFunction;
  timeoutMs: number;
  scheduler: Scheduler;
}

export interface CallInit {
  method: 'GET' | 'HEAD' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

/**
 * Every request the SDK makes goes through here: the key is added, each call has a deadline covering its
 * body too, and every request in flight, long-lived streams included, can be aborted by close().
 */
export class Http {
  private readonly inFlight = new Set<AbortController>();
  private closed = false;
  private readonly base: string;

  constructor(private readonly options: HttpOptions) {
    this.base = options.evalUrl.replace(/\/+$/, '');
  }

  /** One request; `read` consumes the response within the same deadline. */
  async call<T>(path: string, init: CallInit, read: (res: Response) => Promise<T>): Promise<T> {
    const controller = this.track();
    const timeoutMs = init.timeoutMs ?? this.options.timeoutMs;
    let timedOut = false;
    const timer = this.options.scheduler.setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    // A fetch of the caller's that ignores the signal must not make a deadline (or close()) wait forever.
    const aborted = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(new Error(`${init.method} ${path} was aborted`)), { once: true });
    });
    aborted.catch(() => {}); // when nothing races it any more, its rejection is of no interest
    try {
      const res = await Promise.race([
        this.options.fetch(this.base + path, {
          method: init.method,
          headers: { authorization: `Bearer ${this.options.sdkKey}`, ...init.headers },
          body: init.body,
          signal: controller.signal,
        }),
        aborted,
      ]);
      return await Promise.race([read(res), aborted]);
    } catch (err) {
      if (timedOut) throw new Error(`${init.method} ${path} timed out after ${timeoutMs} ms`);
      throw err;
    } finally {
      this.options.scheduler.clearTimeout(timer);
      this.inFlight.delete(controller);
    }
  }

  /** A long-lived GET (the event stream): no deadline; ends through `controller` or close(). */
  async open(path: string, headers: Record<string, string>, controller: AbortController): Promise<Response> {
    if (this.closed) throw new Error('the client is closed');
    this.inFlight.add(controller);
    controller.signal.addEventListener('abort', () => this.inFlight.delete(controller));
    return this.options.fetch(this.base + path, {
      method: 'GET',
      headers: { authorization: `Bearer ${this.options.sdkKey}`, ...headers },
      signal: controller.signal,
    });
  }

  /** Aborts everything in flight; new requests stay possible (close() still sends the last counts). */
  abortAll(): void {
    for (const controller of [...this.inFlight]) controller.abort();
    this.inFlight.clear();
  }

  /** Aborts everything and refuses new requests. */
  close(): void {
    this.closed = true;
    this.abortAll();
  }

  private track(): AbortController {
    if (this.closed) throw new Error('the client is closed');
    const controller = new AbortController();
    this.inFlight.add(controller);
    return controller;
  }
}

/** Drops a response body we do not need, so the connection can be reused at once. */
export async function discardBody(res: Response): Promise<void> {
  try {
    await res.body?.cancel();
  } catch {
    // already consumed or aborted
  }
}

export type SnapshotFetch = { modified: true; snapshot: Snapshot; etag: string } | { modified: false };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks the outer shape of a snapshot; the flags themselves are checked by compiling them. */
export function parseSnapshot(value: unknown): Snapshot {
  if (!isPlainObject(value) || typeof value.version !== 'number' || !Number.isFinite(value.version) || !isPlainObject(value.flags)) {
    throw new Error('the snapshot is not { version, environment, flags }');
  }
  for (const key of Object.keys(value.flags)) {
    if (!isPlainObject(value.flags[key])) throw new Error(`the snapshot entry of ${key} is not an object`);
  }
  if (value.segments !== undefined) {
    if (!isPlainObject(value.segments)) throw new Error('the snapshot segments are not an object');
    for (const key of Object.keys(value.segments)) {
      if (!isPlainObject(value.segments[key])) throw new Error(`the snapshot segment ${key} is not an object`);
    }
  }
  return value as unknown as Snapshot;
}

/** The ETag the server gives a snapshot version: the letter v and the version, quoted. */
export function etagOf(version: number): string {
  return `"v${version}"`;
}

/** The version an ETag names, or null when it is not one of ours. */
export function versionOfEtag(etag: string | null): number | null {
  const match = etag === null ? null : /^(?:W\/)?"v(\d+)"$/.exec(etag.trim());
  return match ? Number(match[1]) : null;
}

/**
 * Asks for the snapshot compressed: fetch decodes it. Node's fetch asks for br by itself only over https; a
 * browser sets Accept-Encoding itself and ignores this header.
 */
const ACCEPT_COMPRESSED = { 'accept-encoding': 'br, gzip' } as const;

/** GET /v1/snapshot with If-None-Match: 304 costs the server a header comparison and us nothing. */
export function fetchSnapshot(http: Http, etag: string | null): Promise<SnapshotFetch> {
  const headers = etag === null ? ACCEPT_COMPRESSED : { ...ACCEPT_COMPRESSED, 'if-none-match': etag };
  return http.call('/v1/snapshot', { method: 'GET', headers }, async (res) => {
    if (res.status === 304) {
      await discardBody(res);
      return { modified: false };
    }
    if (res.status !== 200) throw await httpError(res, 'GET /v1/snapshot');
    const snapshot = parseSnapshot(await res.json());
    return { modified: true, snapshot, etag: res.headers.get('etag') ?? etagOf(snapshot.version) };
  });
}

/**
 * HEAD /v1/snapshot with If-None-Match: remote mode learns the version without downloading flags it does not
 * evaluate. Resolves with the new version, or null when it has not changed.
 */
export function probeSnapshotVersion(http: Http, etag: string | null): Promise<number | null> {
  return http.call('/v1/snapshot', { method: 'HEAD', headers: etag === null ? {} : { 'if-none-match': etag } }, async (res) => {
    await discardBody(res);
    if (res.status === 304) return null;
    if (res.status !== 200) throw await httpError(res, 'HEAD /v1/snapshot');
    const version = versionOfEtag(res.headers.get('etag'));
    if (version === null) throw new Error('HEAD /v1/snapshot answered without a version ETag');
    return version;
  });
}
