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
    /** The HTTP status, or 0 when upstream could not be reached. */
    readonly status: number,
  ) {
    super(message);
  }
}

export class UpstreamClient {
  private readonly origin: string;
  private readonly fetch: typeof fetch;
  private readonly timeoutMs: number;

  constructor(private readonly options: UpstreamOptions) {
    this.origin = options.origin.replace(/\/+$/, '');
    this.fetch = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  /** A request with the admin key; network failures become UpstreamError status 0. */
  async request(path: string, init: RequestInit & { timeout?: boolean } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${this.options.token}`);
    const signal = init.timeout === false ? init.signal : AbortSignal.timeout(this.timeoutMs);
    try {
      return await this.fetch(`${this.origin}${path}`, { ...init, headers, signal });
    } catch (err) {
      throw new UpstreamError(`upstream ${this.origin} unreachable: ${(err as Error).message}`, 0);
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
