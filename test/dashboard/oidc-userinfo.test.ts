import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOidcSettings } from '../../src/foundations/config/oidc-settings.js';
import { jarFetch, signInAtProvider, startTestProvider, type TestProvider } from '../helpers/oidc-provider.mjs';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

/** A provider that keeps the groups out of the ID token (they are scope claims and an access token is issued). */
describe('single sign-on with the groups only in the userinfo answer', () => {
  let provider: TestProvider;
  let svc: TestService;

  beforeAll(async () => {
    provider = await startTestProvider({
      claimsInIdToken: false,
      people: [
        { id: 'u-alice', login: 'alice', password: 'alice-at-provider', email: 'alice@example.com', groups: ['support'] },
        { id: 'u-uma', login: 'uma', password: 'uma-at-provider', email: 'uma@example.com', groups: ['marketing'] },
      ],
    });
    svc = await startTestService({
      oidc: parseOidcSettings({
        FLAGOPS_OIDC_ISSUER: provider.issuer,
        FLAGOPS_OIDC_CLIENT_ID: provider.clientId,
        FLAGOPS_OIDC_CLIENT_SECRET: provider.clientSecret,
        FLAGOPS_OIDC_ROLES: 'support=viewer',
      }),
    });
    await provider.registerRedirectUri(`${svc.controlUrl}/auth/oidc/callback`);
  }, 60_000);

  afterAll(async () => {
    await svc?.stop();
    await provider?.stop();
  });

  it('asks the userinfo endpoint for them, for the subject of the verified ID token', async () => {
    const alice = await signInAtProvider(svc.controlUrl, 'alice', 'alice-at-provider');
    expect((await jarFetch(alice.jar, alice.callbackUrl)).status).toBe(303);
    const me = await jarFetch(alice.jar, `${svc.controlUrl}/dashboard/api/session`);
    expect(await me.json()).toMatchObject({ user: { name: 'alice@example.com' }, signedInWith: 'oidc' });

    const uma = await signInAtProvider(svc.controlUrl, 'uma', 'uma-at-provider');
    const refused = await jarFetch(uma.jar, uma.callbackUrl);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('(your groups: marketing)');
  });
});
