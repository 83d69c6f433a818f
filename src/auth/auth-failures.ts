/** What failed: a wrong API key (bearer, or git's basic auth), a wrong dashboard password, or an attempt refused unchecked (429). */
export type AuthFailureKind = 'api_key' | 'password' | 'rate_limited';

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
  return { api_key: counts.get('api_key') ?? 0, password: counts.get('password') ?? 0, rate_limited: counts.get('rate_limited') ?? 0 };
}
