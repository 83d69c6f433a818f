/**
 * A small JSON client over node's fetch for tests of the control plane and the evaluation API.
 *
 * ```ts
 * const api = httpClient(svc.controlUrl, svc.admin);
 * const { status, body } = await api.post('/api/v1/projects', { name: 'Shop', slug: 'shop' });
 * await api.request('PUT', path, { rawBody: 'not json', headers: { 'content-type': 'text/plain' } });
 * ```
 * Bodies are sent as JSON (content-type application/json); responses are parsed as JSON when they say so.
 * Pass `key` null for a request without Authorization.
 */
/** A JSON response body: tests read it through assertions, so it is left untyped on purpose. */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type Json = any;

export interface HttpResponse<T = Json> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is, instead of `body` as JSON. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface HttpClient {
  request<T = Json>(method: string, path: string, options?: RequestOptions): Promise<HttpResponse<T>>;
  get<T = Json>(path: string): Promise<HttpResponse<T>>;
  post<T = Json>(path: string, body?: unknown): Promise<HttpResponse<T>>;
  put<T = Json>(path: string, body?: unknown): Promise<HttpResponse<T>>;
  patch<T = Json>(path: string, body?: unknown): Promise<HttpResponse<T>>;
  delete<T = Json>(path: string): Promise<HttpResponse<T>>;
}

export function httpClient(baseUrl: string, key: string | null = null): HttpClient {
  const request = async <T>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse<T>> => {
    const headers: Record<string, string> = {};
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers: { ...headers, ...options.headers }, body });
    const text = await res.text();
    const json = (res.headers.get('content-type') ?? '').includes('json') && text !== '';
    return { status: res.status, body: (json ? JSON.parse(text) : text) as T, headers: res.headers };
  };
  return {
    request,
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, { body }),
    put: (path, body) => request('PUT', path, { body }),
    patch: (path, body) => request('PATCH', path, { body }),
    delete: (path) => request('DELETE', path),
  };
}
