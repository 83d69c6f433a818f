import { httpClient } from '../../helpers/http-client.js';
import type { TestService } from '../../helpers/start-test-service.js';

export interface SignedIn {
  cookie: string;
  csrfToken: string;
  setCookie: string;
}

/** Creates a dashboard user through the admin API (the documented way); returns the user. */
export async function addUser(
  svc: TestService,
  username: string,
  name: string,
  password = `${username}-password-1`,
  org = Object.keys(svc.orgs)[0],
) {
  const res = await httpClient(svc.controlUrl, svc.orgs[org].admin).post('/api/v1/users', { username, name, password });
  if (res.status !== 201) throw new Error(`creating user ${username}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; username: string; name: string; org: string };
}

/** Signs in over HTTP as a same-origin page would; returns the cookie to send back and the CSRF token. */
export async function signIn(baseUrl: string, username: string, password = `${username}-password-1`): Promise<SignedIn> {
  const res = await fetch(`${baseUrl}/dashboard/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: baseUrl, 'sec-fetch-site': 'same-origin' },
    body: JSON.stringify({ username, password }),
  });
  if (res.status !== 200) throw new Error(`sign-in of ${username}: ${res.status} ${await res.text()}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const body = (await res.json()) as { csrfToken: string };
  return { cookie: setCookie.split(';', 1)[0], csrfToken: body.csrfToken, setCookie };
}

/** Headers of a same-origin dashboard request carrying the session. */
export function sessionHeaders(baseUrl: string, session: SignedIn, extra: Record<string, string> = {}): Record<string, string> {
  return { cookie: session.cookie, origin: baseUrl, 'sec-fetch-site': 'same-origin', 'x-csrf-token': session.csrfToken, ...extra };
}
