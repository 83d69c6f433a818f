export interface TestPerson {
  id: string;
  login: string;
  password: string;
  email?: string;
  preferredUsername?: string;
  groups?: string[];
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Registers the client with this redirect URI (known once flagops listens). */
  registerRedirectUri(redirectUri: string): Promise<void>;
  /** Changes the ID token of every token endpoint answer from now on (null: stop). */
  tamperIdToken(fn: ((idToken: string) => string | Promise<string>) | null): void;
  /** The ID token's claims with `changes`, signed again with the provider's key (or another key of the same kid). */
  resign(idToken: string, changes?: Record<string, unknown>, options?: { otherKey?: boolean }): Promise<string>;
  stop(): Promise<void>;
}

export function startTestProvider(options: {
  people: TestPerson[];
  port?: number;
  clientId?: string;
  clientSecret?: string;
  /** false: the groups and email only in the userinfo answer, not in the ID token (default true). */
  claimsInIdToken?: boolean;
}): Promise<TestProvider>;

export class CookieJar {
  header(url: string): string;
  take(url: string, response: Response): void;
  get(url: string, name: string): string | undefined;
}

export function jarFetch(jar: CookieJar, url: string, init?: RequestInit & { headers?: Record<string, string> }): Promise<Response>;

export function signInAtProvider(
  controlUrl: string,
  login: string,
  password: string,
  jar?: CookieJar,
): Promise<{ callbackUrl: string; jar: CookieJar }>;
