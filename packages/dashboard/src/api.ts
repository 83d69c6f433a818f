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

/** The fetch itself failed: no answer came (the server is down, or the network). */
const UNREACHABLE = 'The server cannot be reached. Check that flagops is running, then try again.';

/**
 * A write the service kept as a change proposal (202 `{ proposal }`): nothing was applied, and the change waits
 * for approval where the message says. Thrown so no page takes the answer for the flag it changed.
 */
export class ProposalKept extends Error {
  constructor(readonly proposal: { id: string; environment?: string; reason?: string }) {
    const why = proposal.reason === 'budget' ? ' (it would take the budget past its limit)' : '';
    super(`Not applied yet: kept as proposal ${proposal.id}${why}, which waits for approval on the Proposals page.`);
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
    let res: Response;
    try {
      res = await doFetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'same-origin',
      });
    } catch {
      throw new ApiError(0, 'unreachable', UNREACHABLE);
    }
    try {
      return await readAnswer<T>(res);
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 401 && path !== '/dashboard/api/session')
        options.onUnauthorized(failure.message);
      throw failure;
    }
  };
  return {
    get: (path) => call('GET', path),
    send: (method, path, body) => call(method, path, body),
  };
}

/** A JSON answer's body, or an ApiError with the API's code and message (and Retry-After, when it says). */
export async function readAnswer<T>(res: Response): Promise<T> {
  const text = await res.text();
  if (res.ok) {
    const answer = (text === '' ? undefined : JSON.parse(text)) as T;
    const proposal = res.status === 202 ? (answer as { proposal?: ProposalKept['proposal'] } | undefined)?.proposal : undefined;
    if (proposal) throw new ProposalKept(proposal);
    return answer;
  }
  // A refusal that is not the API's JSON (a proxy's page) is still shown, not lost in a parse error.
  let error: { code?: string; message?: string } | undefined;
  try {
    error = (JSON.parse(text) as { error?: typeof error } | null)?.error;
  } catch {
    error = text.trim() === '' ? undefined : { message: `${res.status} ${res.statusText}: ${text.trim().slice(0, 300)}` };
  }
  const retry = Number(res.headers.get('retry-after'));
  throw new ApiError(
    res.status,
    error?.code ?? 'error',
    error?.message ?? `${res.status} ${res.statusText}`,
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
}

/** A failure as one sentence for the person at the screen. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  // fetch() itself fails with a TypeError where no answer came (key-api.ts calls it directly).
  if (err instanceof TypeError && /fetch|network/i.test(err.message)) return UNREACHABLE;
  return err instanceof Error ? err.message : String(err);
}
