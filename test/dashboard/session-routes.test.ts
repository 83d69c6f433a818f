import Router from '@koa/router';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { registerSessionRoutes } from '../../src/apps/dashboard/sessions/session-routes.js';
import { SessionService } from '../../src/apps/dashboard/sessions/session-service.js';
import { UserService } from '../../src/apps/dashboard/users/user-service.js';
import { AuthGuard } from '../../src/foundations/auth/auth-guard.js';
import { ConfigError, loadConfig, parseTrustProxy } from '../../src/foundations/config/config.js';
import { trustProxies } from '../../src/foundations/http/client-address.js';
import { errorMiddleware } from '../../src/foundations/http/error-middleware.js';
import { listen, type RunningServer } from '../../src/foundations/http/serve.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { stateIn } from '../helpers/control-state.js';
import { CHEAP_COST, useDataDir } from './helpers/temp-dir.js';

describe('the sign-in routes behind a reverse proxy (FLAGOPS_TRUST_PROXY)', () => {
  const tempDir = useDataDir();
  let server: RunningServer | undefined;
  afterEach(() => server?.close());

  async function serve(trustProxy: boolean): Promise<string> {
    const dataDir = await tempDir();
    const users = await UserService.open({ state: await stateIn(dataDir), cost: CHEAP_COST });
    await users.create('acme', { username: 'alice', name: 'Alice', password: 'alice-password-1' });
    const sessions = await SessionService.open({ state: await stateIn(dataDir), logger: silentLogger });
    const app = new Koa();
    const router = new Router();
    registerSessionRoutes(router, { users, sessions, guard: new AuthGuard({ trustedProxies: trustProxy ? 1 : 0 }) });
    trustProxies(app, trustProxy ? 1 : 0);
    app.use(errorMiddleware(silentLogger));
    app.use(router.routes());
    server = await listen(app, '127.0.0.1', 0);
    return server.url;
  }

  const proxied = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'flags.example.com' };
  const signIn = (url: string, headers: Record<string, string>) =>
    fetch(`${url}/dashboard/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ username: 'alice', password: 'alice-password-1' }),
    });

  it('sets a Secure __Host- cookie when the proxy says the browser came over https', async () => {
    const url = await serve(true);
    const res = await signIn(url, { ...proxied, origin: 'https://flags.example.com' });
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^__Host-flagops_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
    const me = await fetch(`${url}/dashboard/api/session`, { headers: { ...proxied, cookie: cookie.split(';', 1)[0] } });
    expect(me.status).toBe(200);
    const { csrfToken } = (await me.json()) as { csrfToken: string };
    const out = await fetch(`${url}/dashboard/api/session`, {
      method: 'DELETE',
      headers: { ...proxied, cookie: cookie.split(';', 1)[0], origin: 'https://flags.example.com', 'x-csrf-token': csrfToken },
    });
    expect(out.status).toBe(200);
    const cleared = out.headers.getSetCookie();
    expect(cleared).toEqual([
      expect.stringMatching(/^flagops_session=;.*Max-Age=0/),
      expect.stringMatching(/^__Host-flagops_session=;.*Max-Age=0; Secure/),
    ]);
  });

  it('without trusting proxies, the same headers make the sign-in look cross-origin, and refused', async () => {
    const url = await serve(false);
    expect((await signIn(url, { ...proxied, origin: 'https://flags.example.com' })).status).toBe(403);
    const plain = await signIn(url, proxied);
    expect(plain.headers.get('set-cookie')).toMatch(/^flagops_session=.*; Max-Age=43200$/);
  });

  it('reads FLAGOPS_TRUST_PROXY as a number of proxies (true: one), default none', () => {
    expect(loadConfig({}).trustProxy).toBe(0);
    expect(parseTrustProxy('true')).toBe(1);
    expect(parseTrustProxy('false')).toBe(0);
    expect(parseTrustProxy('0')).toBe(0);
    expect(parseTrustProxy('2')).toBe(2);
    expect(loadConfig({ FLAGOPS_TRUST_PROXY: '1' }).trustProxy).toBe(1);
    for (const bad of ['yes please', '-1', '1.5', '100']) expect(() => parseTrustProxy(bad), bad).toThrow(ConfigError);
  });
});
