import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/foundations/config/config.js';
import { parseOidcSettings } from '../../src/foundations/config/oidc-settings.js';

const FULL = {
  FLAGOPS_OIDC_ISSUER: 'https://sso.example.com/realms/acme',
  FLAGOPS_OIDC_CLIENT_ID: 'flagops',
  FLAGOPS_OIDC_CLIENT_SECRET: 's3cret',
  FLAGOPS_OIDC_ROLES: 'flag-admins=admin;support=viewer',
};

describe('FLAGOPS_OIDC_* settings', () => {
  it('are absent when none is set', () => {
    expect(parseOidcSettings({})).toBeUndefined();
    expect(loadConfig({}).oidc).toBeUndefined();
  });

  it('read the issuer, the client, the role mapping, the organisation and the scopes', () => {
    const oidc = parseOidcSettings({ ...FULL, FLAGOPS_OIDC_ORG: 'acme' });
    expect(oidc).toMatchObject({
      settings: { clientId: 'flagops', clientSecret: 's3cret', org: 'acme', scopes: 'openid email profile groups' },
    });
    expect(oidc && 'settings' in oidc && oidc.settings.issuer.href).toBe('https://sso.example.com/realms/acme');
    expect(loadConfig(FULL).oidc).toMatchObject({ settings: { clientId: 'flagops' } });
  });

  it('accept http:// only on a loopback address', () => {
    for (const issuer of ['http://127.0.0.1:5556/dex', 'http://localhost:8080/realms/dev', 'http://[::1]:9000']) {
      expect(parseOidcSettings({ ...FULL, FLAGOPS_OIDC_ISSUER: issuer })).toHaveProperty('settings');
    }
    for (const issuer of ['http://sso.example.com', 'http://10.0.0.5:8080', 'ftp://127.0.0.1']) {
      expect(parseOidcSettings({ ...FULL, FLAGOPS_OIDC_ISSUER: issuer })).toEqual({
        problem: expect.stringContaining('FLAGOPS_OIDC_ISSUER must be an https:// URL'),
      });
    }
  });

  it('say what is wrong without stopping the start (loadConfig does not throw): a wrong setting turns SSO off', () => {
    expect(loadConfig({ ...FULL, FLAGOPS_OIDC_ISSUER: 'sso.example.com' }).oidc).toEqual({
      problem: expect.stringContaining("FLAGOPS_OIDC_ISSUER must be the provider's issuer URL"),
    });
    expect(parseOidcSettings({ FLAGOPS_OIDC_ISSUER: FULL.FLAGOPS_OIDC_ISSUER })).toEqual({
      problem: 'single sign-on needs FLAGOPS_OIDC_CLIENT_ID, FLAGOPS_OIDC_CLIENT_SECRET, FLAGOPS_OIDC_ROLES too (set: FLAGOPS_OIDC_ISSUER)',
    });
    // Found once the issuer was read: it comes along, so the sign-in page and /healthz name the provider.
    expect(parseOidcSettings({ ...FULL, FLAGOPS_OIDC_ROLES: 'admins' })).toEqual({
      problem: 'FLAGOPS_OIDC_ROLES entry "admins" is not <group>=<role>',
      issuer: new URL(FULL.FLAGOPS_OIDC_ISSUER),
    });
    expect(parseOidcSettings({ ...FULL, FLAGOPS_OIDC_SCOPES: 'email groups' })).toEqual({
      problem: 'FLAGOPS_OIDC_SCOPES must include openid',
      issuer: new URL(FULL.FLAGOPS_OIDC_ISSUER),
    });
  });
});
