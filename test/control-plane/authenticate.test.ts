import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Context } from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate, bearerKeyResolver, type PrincipalResolver } from '../../src/apps/control-plane/principal-resolvers.js';
import { KeyService } from '../../src/foundations/auth/key-service.js';
import type { Principal } from '../../src/foundations/auth/principal.js';
import { UnauthorizedError } from '../../src/foundations/errors/kinds.js';
import { stateIn } from '../helpers/control-state.js';

/** Just what the resolvers read of a Koa context: request headers. */
const request = (headers: Record<string, string>) => ({ get: (name: string) => headers[name.toLowerCase()] ?? '' }) as unknown as Context;

describe('control-plane authentication', () => {
  let dataDir: string;
  let keys: KeyService;
  let adminKey: string;
  let sdkKey: string;
  const session: Principal = { org: 'acme', kind: 'session', keyId: 'sess-1', prefix: '', name: 'Erin' };
  // Stands in for the dashboard's cookie resolver: recognises its cookie, ignores requests without it.
  const cookieResolver: PrincipalResolver = (ctx) => (ctx.get('cookie') === 'flagops_session=ok' ? session : null);

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-authn-'));
    keys = await KeyService.open({ state: await stateIn(dataDir) });
    adminKey = (await keys.createKey('acme', { kind: 'admin' })).key;
    sdkKey = (await keys.createKey('acme', { kind: 'sdk', projectId: 'p', environment: 'prod' })).key;
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('a bearer admin key is its principal', async () => {
    const principal = await authenticate(request({ authorization: `Bearer ${adminKey}` }), [bearerKeyResolver(keys), cookieResolver]);
    expect(principal).toMatchObject({ org: 'acme', kind: 'admin' });
  });

  it('a session resolver plugged in after the bearer resolver serves requests without Authorization', async () => {
    expect(await authenticate(request({ cookie: 'flagops_session=ok' }), [bearerKeyResolver(keys), cookieResolver])).toBe(session);
  });

  it('a bad bearer key is 401 even when a session cookie is present: a credential that was sent must be valid', async () => {
    const ctx = request({ authorization: 'Bearer svc_adm_unknown', cookie: 'flagops_session=ok' });
    await expect(authenticate(ctx, [bearerKeyResolver(keys), cookieResolver])).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('an sdk key, a non-bearer header and no credential at all are 401', async () => {
    const cases: Array<Record<string, string>> = [{ authorization: `Bearer ${sdkKey}` }, { authorization: `Basic ${adminKey}` }, {}];
    for (const headers of cases) {
      await expect(
        authenticate(request(headers), [bearerKeyResolver(keys), cookieResolver]),
        JSON.stringify(headers),
      ).rejects.toBeInstanceOf(UnauthorizedError);
    }
  });
});
