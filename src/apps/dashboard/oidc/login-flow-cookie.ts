import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { readHostPrefixedCookie } from '../sessions/session-cookie.js';

/** What a sign-in started by GET /auth/oidc/login must find again at its callback. */
export interface LoginFlow {
  state: string;
  nonce: string;
  /** PKCE's code verifier: only its hash went to the provider. */
  verifier: string;
  /** The redirect URI the provider was given (the token request must repeat it). */
  redirectUri: string;
  /** Epoch ms after which the callback is refused. */
  expiresAt: number;
}

/** A sign-in must come back within this long (the provider's login form included). */
export const LOGIN_FLOW_MS = 10 * 60 * 1000;

export const PLAIN_FLOW_COOKIE = 'flagops_oidc';
export const SECURE_FLOW_COOKIE = `__Host-${PLAIN_FLOW_COOKIE}`;

/**
 * The login flow travels in a cookie sealed with AES-256-GCM under a key derived from the installation's pepper,
 * so every control plane sharing the state can finish a sign-in another one started, nothing is stored per
 * started sign-in (a flood of GET /auth/oidc/login costs no memory), and the browser can neither read nor
 * change the PKCE verifier and nonce. The cookie binds the callback to the browser that started the sign-in.
 */
export class LoginFlowSealer {
  private readonly key: Buffer;

  constructor(pepper: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', pepper, Buffer.alloc(0), 'flagops oidc login flow v1', 32));
  }

  seal(flow: LoginFlow): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(flow), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The flow of a sealed value, or null when it was not sealed here (changed, another key, garbage). */
  unseal(value: string): LoginFlow | null {
    const raw = Buffer.from(value, 'base64url');
    if (raw.length < 29) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      const flow = JSON.parse(text) as LoginFlow;
      const strings = [flow.state, flow.nonce, flow.verifier, flow.redirectUri].every((v) => typeof v === 'string');
      return strings && typeof flow.expiresAt === 'number' ? flow : null;
    } catch {
      return null;
    }
  }
}

/**
 * `Set-Cookie` of a login flow. SameSite=Lax, not Strict like the session cookie: the callback is a top-level
 * navigation from the provider's site, which a Strict cookie would not accompany.
 */
export function loginFlowCookie(value: string, secure: boolean): string {
  const name = secure ? SECURE_FLOW_COOKIE : PLAIN_FLOW_COOKIE;
  return [`${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${LOGIN_FLOW_MS / 1000}`, ...(secure ? ['Secure'] : [])].join(
    '; ',
  );
}

export function clearedLoginFlowCookie(secure: boolean): string {
  const name = secure ? SECURE_FLOW_COOKIE : PLAIN_FLOW_COOKIE;
  return [`${name}=`, 'Path=/', 'HttpOnly', 'SameSite=Lax', 'Max-Age=0', ...(secure ? ['Secure'] : [])].join('; ');
}

/** The login flow cookie's value in a `Cookie` header, or null (the __Host- one wins). */
export function readLoginFlowCookie(cookieHeader: string): string | null {
  return readHostPrefixedCookie(cookieHeader, SECURE_FLOW_COOKIE, PLAIN_FLOW_COOKIE);
}
