import { FlagopsError } from '../../foundations/errors/kinds.js';

/** The control plane as a replica reaches it: its origin and an admin key of the organisation. */
export interface UpstreamOptions {
  origin: string;
  token: string;
  /** Each request's deadline. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export class UpstreamError extends Error {
  constructor(
    message: string,
    /** The HTTP status, or 0 when upstream could not be reached (or did not answer in time). */
    readonly status: number,
    /** True when upstream was reached but did not answer within the deadline. */
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/**
 * Requests to the control plane a replica follows. With several upstreams, `follow` moves every later request
 * (the feed, view fetches, key checks, count batches) to another one.
 */
export class UpstreamClient {
  private current: string;
  private readonly fetch: typeof fetch;
  readonly timeoutMs: number;

  constructor(private readonly options: UpstreamOptions) {
    this.current = trimOrigin(options.origin);
    this.fetch = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  get origin(): string {
    return this.current;
  }

  follow(origin: string): void {
    this.current = trimOrigin(origin);
  }

  /**
   * A request with the admin key; network failures become UpstreamError status 0. It ends at the deadline
   * unless `timeout` is false, and at once when `signal` aborts.
   */
  async request(path: string, init: RequestInit & { timeout?: boolean } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${this.options.token}`);
    // fetch decodes both, but asks for br on its own only over https: views come compressed either way.
    if (!headers.has('accept-encoding')) headers.set('accept-encoding', 'br, gzip');
    const deadline = init.timeout === false ? undefined : AbortSignal.timeout(this.timeoutMs);
    const signals = [init.signal, deadline].filter((s): s is AbortSignal => s != null);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const origin = this.current;
    try {
      return await this.fetch(`${origin}${path}`, { ...init, headers, signal });
    } catch (err) {
      const timedOut = deadline?.aborted === true;
      // fetch says "fetch failed"; its cause says why (ECONNREFUSED, ECONNRESET, …).
      const cause = (err as { cause?: { code?: unknown } }).cause?.code;
      const why = timedOut ? `no answer within ${this.timeoutMs} ms` : typeof cause === 'string' ? cause : (err as Error).message;
      throw new UpstreamError(`upstream ${origin} unreachable: ${why}`, 0, timedOut);
    }
  }

  async json<T>(path: string, init: RequestInit = {}): Promise<T> {
    const res = await this.request(path, init);
    if (!res.ok) throw await failure(res, path);
    return (await res.json()) as T;
  }

  async postJson<T>(path: string, body: unknown): Promise<T> {
    return this.json<T>(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  }
}

const trimOrigin = (origin: string) => origin.replace(/\/+$/, '');

export async function failure(res: Response, path: string): Promise<UpstreamError> {
  const text = await res.text().catch(() => '');
  return new UpstreamError(`upstream ${path}: ${res.status} ${text.slice(0, 200)}`, res.status);
}

/** Why the replica cannot answer an evaluation request right now (503: the SDK retries). */
export class UpstreamUnavailableError extends FlagopsError {
  constructor(message: string) {
    super('unavailable', message);
  }
}
