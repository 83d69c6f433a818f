// A real OpenID Connect provider for tests and benchmarks: `oidc-provider` (a certified implementation) on a free
// loopback port, with one confidential client, people with passwords and groups, and its own login form.
// Plain JavaScript so that scripts/bench/sign-in-oidc.mjs uses the same provider; types in oidc-provider.d.mts.
import { createServer } from 'node:http';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider from 'oidc-provider';

/** A minimal in-memory adapter, so the client (whose redirect URI is known only once flagops listens) can be added later. */
function memoryAdapter(store) {
  return class {
    constructor(model) {
      this.model = model;
    }
    key(id) {
      return `${this.model}:${id}`;
    }
    async upsert(id, payload) {
      store.set(this.key(id), payload);
      if (this.model === 'Session' && payload.uid) store.set(`uid:${payload.uid}`, id);
      if (payload.grantId) {
        const members = store.get(`grant:${payload.grantId}`) ?? [];
        members.push(this.key(id));
        store.set(`grant:${payload.grantId}`, members);
      }
    }
    async find(id) {
      return store.get(this.key(id));
    }
    async findByUid(uid) {
      const id = store.get(`uid:${uid}`);
      return id === undefined ? undefined : this.find(id);
    }
    async findByUserCode() {
      return undefined;
    }
    async consume(id) {
      const payload = store.get(this.key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId) {
      for (const key of store.get(`grant:${grantId}`) ?? []) store.delete(key);
      store.delete(`grant:${grantId}`);
    }
  };
}

const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginForm(uid, message = '') {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test provider sign-in</title></head><body>
<h1>Test provider</h1>
<form method="post" action="/interaction/${escapeHtml(uid)}/login" aria-label="Provider sign-in">
<p role="alert">${escapeHtml(message)}</p>
<label>Email or username <input name="login" autocomplete="username"></label>
<label>Provider password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Continue</button>
</form></body></html>`;
}

async function formBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * Starts the provider on `port` of 127.0.0.1 (default: a free one). `claimsInIdToken: false`: the groups and
 * email only in the userinfo answer. `people`: [{ id, login, password, email?,
 * preferredUsername?, groups? }].
 * Returns { issuer, clientId, clientSecret, registerRedirectUri(uri), tamperIdToken(fn | null), resign(idToken,
 * changes, { otherKey }), stop() }.
 */
export async function startTestProvider({
  people,
  port = 0,
  clientId = 'flagops-test',
  clientSecret = 'flagops-test-secret-0123456789',
  claimsInIdToken = true,
}) {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingJwk = { ...(await exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
  const store = new Map();
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const byId = new Map(people.map((p) => [p.id, p]));
  let tamper = null;

  const provider = new Provider(issuer, {
    adapter: memoryAdapter(store),
    jwks: { keys: [signingJwk] },
    cookies: { keys: ['flagops test provider cookie key'] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['preferred_username', 'name'],
      groups: ['groups'],
    },
    // Groups and email in the ID token itself, as Keycloak, Okta and Dex send them; or, conforming strictly to
    // the spec when an access token is issued, only in the userinfo answer.
    conformIdTokenClaims: !claimsInIdToken,
    pkce: { required: () => true },
    ttl: { Interaction: 600, Grant: 3600, Session: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: true } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // A first-party client: no consent screen.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid email profile groups');
      await grant.save();
      return grant;
    },
    async findAccount(_ctx, id) {
      const person = byId.get(id);
      if (!person) return undefined;
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          ...(person.email ? { email: person.email, email_verified: true } : {}),
          ...(person.preferredUsername ? { preferred_username: person.preferredUsername } : {}),
          groups: person.groups ?? [],
        }),
      };
    },
  });
  // The token endpoint's answer, changed by the test (a tampered, re-signed or expired ID token).
  provider.use(async (ctx, next) => {
    await next();
    if (tamper && ctx.path === '/token' && ctx.body && typeof ctx.body.id_token === 'string') {
      ctx.body = { ...ctx.body, id_token: await tamper(ctx.body.id_token) };
    }
  });
  const handle = provider.callback();

  server.on('request', async (req, res) => {
    const url = new URL(req.url, issuer);
    const match = /^\/interaction\/([^/]+)(\/login)?$/.exec(url.pathname);
    if (!match) return handle(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(loginForm(details.uid));
        return;
      }
      const form = await formBody(req);
      const person = people.find((p) => p.login === form.get('login') && p.password === form.get('password'));
      if (!person) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(loginForm(details.uid, 'Wrong login or password.'));
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: person.id } }, { mergeWithLastSubmission: false });
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err?.message ?? err));
    }
  });

  const resign = async (idToken, changes = {}, { otherKey = false } = {}) => {
    const key = otherKey ? (await generateKeyPair('RS256')).privateKey : privateKey;
    return new SignJWT({ ...decodeJwt(idToken), ...changes }).setProtectedHeader({ alg: 'RS256', kid: signingJwk.kid }).sign(key);
  };

  return {
    issuer,
    clientId,
    clientSecret,
    async registerRedirectUri(redirectUri) {
      await new (memoryAdapter(store))('Client').upsert(clientId, {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      });
    },
    tamperIdToken(fn) {
      tamper = fn;
    },
    resign,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Cookies per host, as a browser keeps them (path and expiry aside: a removed cookie is dropped). */
export class CookieJar {
  constructor() {
    this.byHost = new Map();
  }
  header(url) {
    const jar = this.byHost.get(new URL(url).host);
    return jar ? [...jar].map(([name, value]) => `${name}=${value}`).join('; ') : '';
  }
  take(url, response) {
    const host = new URL(url).host;
    const jar = this.byHost.get(host) ?? new Map();
    this.byHost.set(host, jar);
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const gone =
        value === '' ||
        attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]) < Date.now()));
      if (gone) jar.delete(name);
      else jar.set(name, value);
    }
  }
  get(url, name) {
    return this.byHost.get(new URL(url).host)?.get(name);
  }
}

/** One request with the jar's cookies, not following redirects. */
export async function jarFetch(jar, url, init = {}) {
  const cookie = jar.header(url);
  const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers ?? {}), ...(cookie ? { cookie } : {}) } });
  jar.take(url, response);
  return response;
}

/**
 * Drives a sign-in over HTTP as a browser would, up to the provider's redirect back to flagops: GET
 * /auth/oidc/login, the provider's authorization endpoint, its login form (login and password), and back.
 * Returns the callback URL (not yet visited) and the jar, which holds flagops' login-flow cookie.
 */
export async function signInAtProvider(controlUrl, login, password, jar = new CookieJar()) {
  let res = await jarFetch(jar, `${controlUrl}/auth/oidc/login`);
  if (res.status !== 302) throw new Error(`GET /auth/oidc/login: ${res.status} ${await res.text()}`);
  let url = res.headers.get('location');
  for (let hop = 0; hop < 10; hop++) {
    res = await jarFetch(jar, url);
    await res.arrayBuffer();
    if (res.status === 200 && new URL(url).pathname.startsWith('/interaction/')) {
      const loginUrl = `${url}/login`;
      res = await jarFetch(jar, loginUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ login, password }).toString(),
      });
      if (res.status === 200) throw new Error(`the provider refused the login of ${login}`);
    }
    const next = res.headers.get('location');
    if (!next) throw new Error(`${url}: ${res.status} without a redirect`);
    url = new URL(next, url).href;
    if (url.startsWith(`${controlUrl}/auth/oidc/callback`)) return { callbackUrl: url, jar };
  }
  throw new Error('too many redirects before the callback');
}
