import { readAnswer } from '../api.js';
import type { CreatedKey, EnvironmentName, KeyView, Project } from '../types.js';

/** What the Keys page creates: an SDK key for one project and environment. */
export interface SdkKeyRequest {
  name?: string;
  projectId: string;
  environment: EnvironmentName;
}

/** The control plane's key routes, called with an admin key (docs/credentials.md, "Managing keys"). */
export interface KeyApi {
  list(): Promise<KeyView[]>;
  projects(): Promise<Project[]>;
  createSdkKey(request: SdkKeyRequest): Promise<CreatedKey>;
  rotate(id: string, graceSeconds: number): Promise<CreatedKey>;
  revoke(id: string): Promise<KeyView>;
}

/**
 * Calls with `Authorization: Bearer <adminKey>`, to this page's own origin only (relative paths), and without
 * the session cookie: a session may not manage keys, so the admin key alone says who is asking. The key lives
 * in this closure and nowhere else; a 401 here is the key's, and never signs the person out.
 */
export function keyApi(adminKey: string, doFetch: typeof fetch = (input, init) => fetch(input, init)): KeyApi {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${adminKey}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await doFetch(`/api/v1${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
    return readAnswer<T>(res);
  };
  const seg = encodeURIComponent;
  return {
    list: async () => (await call<{ keys: KeyView[] }>('GET', '/keys')).keys,
    projects: async () => (await call<{ projects: Project[] }>('GET', '/projects')).projects,
    createSdkKey: (request) => call('POST', '/keys', { kind: 'sdk', ...request }),
    rotate: (id, graceSeconds) => call('POST', `/keys/${seg(id)}/rotate`, { graceSeconds }),
    revoke: (id) => call('DELETE', `/keys/${seg(id)}`),
  };
}
