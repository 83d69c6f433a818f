import type { IncomingMessage } from 'node:http';
import { RateLimitedError } from '../errors/kinds.js';
import { clientAddress } from '../http/client-address.js';
import { type Logger, silentLogger } from '../log/logger.js';
import { type Admission, AttemptThrottle, type ThrottleOptions } from './attempt-throttle.js';

/**
 * What failed: a wrong API key (bearer, or git's basic auth), a wrong dashboard password, an OpenID Connect
 * sign-in refused (bad state, code or ID token, or no mapped group), or an attempt refused unchecked (429).
 */
export type AuthFailureKind = 'api_key' | 'password' | 'oidc' | 'rate_limited';

const counts = new Map<AuthFailureKind, number>();

/**
 * Failed authentications since the process started, by kind: an in-process counter for the metrics endpoint.
 * Process-wide on purpose, like the process's other metrics.
 */
export function countAuthFailure(kind: AuthFailureKind): void {
  counts.set(kind, (counts.get(kind) ?? 0) + 1);
}

/** The counts so far, every kind present (0 when none). */
export function authFailureCounts(): Record<AuthFailureKind, number> {
  return {
    api_key: counts.get('api_key') ?? 0,
    password: counts.get('password') ?? 0,
    oidc: counts.get('oidc') ?? 0,
    rate_limited: counts.get('rate_limited') ?? 0,
  };
}

/** Where a credential was presented, for the log line of a failure. */
export type AuthChannel = 'control plane' | 'evaluation' | 'git' | 'dashboard sign-in' | 'trigger URL';

export interface AuthGuardOptions {
  logger?: Logger;
  /** FLAGOPS_TRUST_PROXY: reverse proxies whose X-Forwarded-For is believed (0: none). */
  trustedProxies?: number;
  /**
   * Failed credentials of any kind from one address (default: 100 free, one forgotten every 5 s, then 1 s
   * doubling up to 60 s): generous enough for people and scripts that get a key wrong now and then, and for
   * a test suite probing its 401s, while a flood or a spray across usernames is stopped within seconds.
   */
  perAddress?: ThrottleOptions;
  /** Failed sign-ins of one username from one address (default: 3 free, then 1 s doubling up to 30 s). */
  perAccount?: ThrottleOptions;
  now?: () => number;
}

/** What a failure's log line may say about the credential: never the key or the password. */
export interface CredentialHint {
  /** The non-secret start of a wrong key (a known kind prefix and a few characters). */
  keyPrefix?: string;
  /** The username of a failed sign-in, when it names an account (a password typed into it would not). */
  username?: string;
  /** Why an OpenID Connect sign-in was refused. */
  reason?: string;
}

/** What an OpenID Connect callback came to: signed in, or refused (why, and who when the provider said). */
export type SsoVerdict<T> = { signedIn: T } | { refused: string; username?: string };

/** The per-account throttle's key of OpenID Connect callbacks from an address: no username is known before one. */
const SSO_ACCOUNT = '\n(openid connect)';

/**
 * Failed authentication, watched: every wrong API key (bearer or git basic auth) and every wrong password
 * counts against the address it came from; once an address has failed too often, its further attempts are
 * answered 429 with Retry-After before any credential is checked. Each checked failure is logged as a warning
 * (address and key prefix or username, never the secret) and counted (auth-failures.ts).
 */
export class AuthGuard {
  private readonly perAddress: AttemptThrottle;
  private readonly perAccount: AttemptThrottle;
  private readonly logger: Logger;
  private readonly proxies: number;

  constructor(options: AuthGuardOptions = {}) {
    const now = options.now ?? Date.now;
    this.logger = options.logger ?? silentLogger;
    this.proxies = options.trustedProxies ?? 0;
    this.perAddress = new AttemptThrottle({
      now,
      freeFailures: 100,
      decayMs: 5_000,
      maxDelayMs: 60_000,
      maxEntries: 100_000,
      resetOnSuccess: false,
      ...options.perAddress,
    });
    this.perAccount = new AttemptThrottle({ now, ...options.perAccount });
  }

  /** The address a request comes from (the proxies' X-Forwarded-For entry when they are trusted). */
  address(req: IncomingMessage): string {
    return clientAddress(req, this.proxies);
  }

  /**
   * Checks a key presented by `req` with `check`: its result, or null when the key is wrong. `check` may answer
   * at once (the service's own keys) or later (a replica asking its control plane). A check that throws leaves
   * the key's verdict unknown, which is no failure of the key.
   */
  checkKey<T>(req: IncomingMessage, channel: AuthChannel, hint: CredentialHint, check: () => T | null): T | null;
  checkKey<T>(req: IncomingMessage, channel: AuthChannel, hint: CredentialHint, check: () => Promise<T | null>): Promise<T | null>;
  checkKey<T>(
    req: IncomingMessage,
    channel: AuthChannel,
    hint: CredentialHint,
    check: () => T | null | Promise<T | null>,
  ): T | null | Promise<T | null> {
    const address = this.address(req);
    const key = addressKey(address);
    this.admit(this.perAddress.begin(key));
    const settle = (failed: boolean) => this.settle(key, failed, { kind: 'api_key', channel, address, hint });
    let result: T | null | Promise<T | null>;
    try {
      result = check();
    } catch (err) {
      settle(false);
      throw err;
    }
    if (!(result instanceof Promise)) {
      settle(result === null);
      return result;
    }
    return result.then(
      (verdict) => {
        settle(verdict === null);
        return verdict;
      },
      (err: unknown) => {
        settle(false);
        throw err;
      },
    );
  }

  /**
   * A dashboard sign-in: throttled per address (across usernames and keys) and per address and username.
   * `check` runs only when both admit the attempt; `usernameKey` is the username as accounts are keyed.
   */
  async checkPassword<T>(
    req: IncomingMessage,
    usernameKey: string,
    check: () => Promise<T | null>,
    known: (user: string) => boolean,
  ): Promise<T | null> {
    const address = this.address(req);
    const key = addressKey(address);
    const accountKey = `${key}\n${usernameKey}`;
    this.admit(this.perAddress.begin(key));
    const account = this.perAccount.begin(accountKey);
    if (!account.admitted) {
      this.perAddress.settle(key, false);
      this.admit(account);
    }
    let failed = false;
    try {
      const result = await check();
      failed = result === null;
      return result;
    } finally {
      this.perAccount.settle(accountKey, failed);
      this.settle(key, failed, {
        kind: 'password',
        channel: 'dashboard sign-in',
        address,
        hint: known(usernameKey) ? { username: usernameKey } : {},
      });
    }
  }

  /**
   * An OpenID Connect callback, throttled like a password sign-in: per address, and per address for SSO as if
   * it were one account (3 free failures, then waits). `check` answers the verdict; a check that throws (the
   * provider out of reach) is no failure of the person.
   */
  async checkSso<T>(req: IncomingMessage, check: () => Promise<SsoVerdict<T>>): Promise<SsoVerdict<T>> {
    const address = this.address(req);
    const key = addressKey(address);
    const accountKey = `${key}${SSO_ACCOUNT}`;
    this.admit(this.perAddress.begin(key));
    const account = this.perAccount.begin(accountKey);
    if (!account.admitted) {
      this.perAddress.settle(key, false);
      this.admit(account);
    }
    let verdict: SsoVerdict<T> | undefined;
    try {
      verdict = await check();
      return verdict;
    } finally {
      const failed = verdict !== undefined && 'refused' in verdict;
      this.perAccount.settle(accountKey, failed);
      const hint: CredentialHint =
        verdict && 'refused' in verdict ? { reason: verdict.refused, ...(verdict.username ? { username: verdict.username } : {}) } : {};
      this.settle(key, failed, { kind: 'oidc', channel: 'dashboard sign-in', address, hint });
    }
  }

  private admit(admission: Admission): void {
    if (admission.admitted) return;
    countAuthFailure('rate_limited');
    const seconds = Math.max(1, Math.ceil(admission.retryAfterMs / 1000));
    throw new RateLimitedError(
      `too many failed authentication attempts from this address; try again in ${seconds} s`,
      admission.retryAfterMs,
    );
  }

  private settle(
    key: string,
    failed: boolean,
    failure: { kind: AuthFailureKind; channel: AuthChannel; address: string; hint: CredentialHint },
  ): void {
    const blocks = this.perAddress.settle(key, failed);
    if (!failed) return;
    countAuthFailure(failure.kind);
    this.logger.warn('authentication failed', {
      credential: failure.kind === 'password' ? 'password' : failure.kind === 'oidc' ? 'openid connect' : 'api key',
      via: failure.channel,
      address: failure.address,
      ...failure.hint,
      ...(blocks ? { throttled: 'further attempts from this address must wait' } : {}),
    });
  }
}

/**
 * The throttle's key of an address: IPv4 as is (an IPv4-mapped IPv6 address as its IPv4 form), IPv6 by its /64,
 * the block a single host or home usually gets, so that a client cannot dodge the throttle by switching
 * addresses within its own block.
 */
export function addressKey(address: string): string {
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!address.includes(':')) return address;
  const [head, tail = ''] = address.split('::', 2);
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
