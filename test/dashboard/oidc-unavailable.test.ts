import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseOidcSettings } from '../../src/foundations/config/oidc-settings.js';
import { createLogger } from '../../src/foundations/log/logger.js';
import type { Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { addUser, signIn } from './helpers/dashboard-session.js';

const TOKEN = 'metrics-token-for-sso-unavailable';

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function settings(issuer: string, extra: Record<string, string> = {}) {
  return parseOidcSettings({
    FLAGOPS_OIDC_ISSUER: issuer,
    FLAGOPS_OIDC_CLIENT_ID: 'flagops',
    FLAGOPS_OIDC_CLIENT_SECRET: 'secret',
    FLAGOPS_OIDC_ROLES: 'admins=admin',
    ...extra,
  });
}

async function health(svc: TestService): Promise<Json> {
  return (await fetch(`${svc.controlUrl}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as Promise<Json>;
}

/** Single sign-on that cannot work never stops the service: flags are served, passwords work, and it says so loudly. */
describe('single sign-on misconfigured or out of reach', () => {
  let svc: TestService | undefined;
  afterEach(() => svc?.stop());

  it('starts with the issuer unreachable: /healthz degraded naming it, the button marked unavailable, a page that says why', async () => {
    const issuer = `http://127.0.0.1:${await closedPort()}`;
    const lines: Json[] = [];
    svc = await startTestService({
      oidc: settings(issuer),
      metrics: { enabled: true, token: TOKEN },
      logger: createLogger({ level: 'error', write: (line) => void lines.push(JSON.parse(line)) }),
    });
    const login = await fetch(`${svc.controlUrl}/auth/oidc/login`, { redirect: 'manual' });
    expect(login.status).toBe(503);
    const page = await login.text();
    expect(page).toContain('Single sign-on cannot be used now');
    expect(page).toContain(`${issuer}/ could not be discovered`);
    expect(login.headers.get('content-security-policy')).toContain("default-src 'none'");

    await expect.poll(async () => (await health(svc as TestService)).sso).toMatchObject({ issuer: `${issuer}/`, state: 'unavailable' });
    expect((await health(svc)).status).toBe('degraded');
    expect(lines).toContainEqual(expect.objectContaining({ level: 'error', msg: 'single sign-on is unavailable; password sign-in works' }));
    const options = (await (await fetch(`${svc.controlUrl}/dashboard/api/sign-in-options`)).json()) as Json;
    expect(options).toMatchObject({ password: true, sso: { available: false } });

    await addUser(svc, 'alice', 'Alice Martin');
    await signIn(svc.controlUrl, 'alice'); // throws unless it works
  });

  it('starts with settings it cannot use (an organisation that does not exist): misconfigured, said at start and in /healthz', async () => {
    const lines: Json[] = [];
    svc = await startTestService({
      oidc: settings('https://sso.example.com', { FLAGOPS_OIDC_ORG: 'globex' }),
      metrics: { enabled: true, token: TOKEN },
      logger: createLogger({ level: 'error', write: (line) => void lines.push(JSON.parse(line)) }),
    });
    const problem = 'FLAGOPS_OIDC_ORG names the organisation "globex", which does not exist (there are: acme)';
    expect((await health(svc)).sso).toEqual({ issuer: 'https://sso.example.com/', state: 'misconfigured', error: problem });
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'single sign-on is off: its settings are wrong; password sign-in works', problem }),
    );
    const login = await fetch(`${svc.controlUrl}/auth/oidc/login`, { redirect: 'manual' });
    expect(login.status).toBe(503);
    expect(await login.text()).toContain(problem.replaceAll('"', '&quot;'));
  });

  it('names the provider, on the button and in /healthz, when what is wrong is the role mapping', async () => {
    svc = await startTestService({
      oidc: settings('https://sso.example.com', { FLAGOPS_OIDC_ROLES: 'flag-admins' }),
      metrics: { enabled: true, token: TOKEN },
    });
    expect((await health(svc)).sso).toEqual({
      issuer: 'https://sso.example.com/',
      state: 'misconfigured',
      error: expect.stringMatching(/^FLAGOPS_OIDC_ROLES /),
    });
    const options = (await (await fetch(`${svc.controlUrl}/dashboard/api/sign-in-options`)).json()) as Json;
    expect(options).toMatchObject({ password: true, sso: { label: 'sso.example.com', available: false } });
  });

  it('answers without SSO when it is not set up: no sso in /healthz, the sign-in page offers the password only', async () => {
    svc = await startTestService({ metrics: { enabled: true, token: TOKEN } });
    expect(await health(svc)).not.toHaveProperty('sso');
    expect(await (await fetch(`${svc.controlUrl}/dashboard/api/sign-in-options`)).json()).toEqual({ password: true, sso: null });
    expect((await fetch(`${svc.controlUrl}/auth/oidc/login`, { redirect: 'manual' })).status).toBe(404);
  });
});
