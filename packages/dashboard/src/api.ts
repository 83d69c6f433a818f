/** A failed call, with the API's error code (docs/api.md) so pages can react to e.g. version_conflict. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export interface Api {
  get<T>(path: string): Promise<T>;
  send<T>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T>;
}

export interface ApiOptions {
  /** The session's CSRF token, sent with every change (the server refuses cookie changes without it). */
  csrfToken(): string | null;
  /** The session ended (expired, signed out elsewhere): back to the sign-in form. */
  onUnauthorized(message: string): void;
  fetch?: typeof fetch;
}

/** Same-origin JSON calls; the session cookie goes along by itself. */
export function createApi(options: ApiOptions): Api {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const headers: Record<string, string> = { accept: 'application/json' };
    const token = options.csrfToken();
    if (method !== 'GET' && token) headers['x-csrf-token'] = token;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await doFetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
    const text = await res.text();
    const data = text === '' ? undefined : (JSON.parse(text) as unknown);
    if (res.ok) return data as T;
    const error = (data as { error?: { code?: string; message?: string } } | undefined)?.error;
    const retry = Number(res.headers.get('retry-after'));
    const failure = new ApiError(
      res.status,
      error?.code ?? 'error',
      error?.message ?? `${res.status} ${res.statusText}`,
      Number.isFinite(retry) && retry > 0 ? retry : undefined,
    );
    if (res.status === 401 && path !== '/dashboard/api/session') options.onUnauthorized(failure.message);
    throw failure;
  };
  return {
    get: (path) => call('GET', path),
    send: (method, path, body) => call(method, path, body),
  };
}

/** A failure as one sentence for the person at the screen. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof TypeError) return 'The server cannot be reached. Check that flagops is running, then try again.';
  return err instanceof Error ? err.message : String(err);
}
