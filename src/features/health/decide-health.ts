import { ENVIRONMENTS, type EnvironmentName, type FlagType } from '@flagops/core';
import type { ServedSummary } from './served-summary.js';

export const HEALTH_STATUSES = ['active', 'potentially_stale', 'stale'] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];
export type HealthReasonCode = 'expired' | 'rolled_out' | 'no_evaluations';

export interface HealthReason {
  code: HealthReasonCode;
  message: string;
}

export interface FlagHealth {
  key: string;
  status: HealthStatus;
  reasons: HealthReason[];
}

/** Everything the decision needs to know of one flag; times are epoch milliseconds. */
export interface FlagHealthInput {
  key: string;
  /** `release` when the flag has no lifecycle. */
  type: FlagType;
  expiresAt?: string;
  /** When the commit that created the flag file was made; undefined when history does not say. */
  createdAt?: number;
  /** Per environment, what it serves now and since when it has served that (undefined: not known). */
  environments: Readonly<Record<EnvironmentName, { served: ServedSummary; since?: number }>>;
  /** The latest moment an evaluation may have happened (counts are per hour: the end of its hour); undefined: none kept. */
  lastEvaluatedAt?: number;
}

export interface HealthSettings {
  now: number;
  staleAfterDays: number;
  /** How many days of evaluation counts are kept: an absence of evaluations cannot be seen further back. */
  countsKeptDays: number;
}

const DAY_MS = 86_400_000;

/** Flag types that are meant to go once rolled out; the others (operational, permission, kill-switch) stay by design. */
const REMOVED_WHEN_ROLLED_OUT: ReadonlySet<FlagType> = new Set(['release', 'experiment']);

/**
 * The health of one flag, a pure function of what history and the counts say (so every control plane, and
 * every test, decides the same). `stale` when any reason says so (expired, rolled out), `potentially_stale`
 * when the only reason is that nothing evaluated it, else `active`.
 */
export function decideHealth(flag: FlagHealthInput, settings: HealthSettings): FlagHealth {
  const { now } = settings;
  const cutoff = now - settings.staleAfterDays * DAY_MS;
  const reasons: HealthReason[] = [];

  const expiry = expiryTime(flag.expiresAt);
  if (expiry !== undefined && now >= expiry) {
    reasons.push({ code: 'expired', message: `expired: it was due to be removed by ${flag.expiresAt}` });
  }

  if (REMOVED_WHEN_ROLLED_OUT.has(flag.type)) {
    const rolled = rolledOutSince(flag);
    if (rolled !== undefined && rolled.since <= cutoff) {
      reasons.push({
        code: 'rolled_out',
        message: `rolled out: every environment has served ${rolled.value} to everyone since ${day(rolled.since)}`,
      });
    }
  }

  const created = flag.createdAt !== undefined && flag.createdAt < cutoff;
  const unevaluated = flag.lastEvaluatedAt === undefined || flag.lastEvaluatedAt < cutoff;
  if (created && unevaluated) reasons.push({ code: 'no_evaluations', message: noEvaluationsMessage(flag, settings) });

  const stale = reasons.some((r) => r.code !== 'no_evaluations');
  const status: HealthStatus = stale ? 'stale' : reasons.length > 0 ? 'potentially_stale' : 'active';
  return { key: flag.key, status, reasons };
}

/** When every environment has served one and the same value, that value (as JSON) and since when all have. */
function rolledOutSince(flag: FlagHealthInput): { value: string; since: number } | undefined {
  let key: string | undefined;
  let since = Number.NEGATIVE_INFINITY;
  for (const env of ENVIRONMENTS) {
    const { served, since: envSince } = flag.environments[env];
    if (served.kind !== 'one' || envSince === undefined) return undefined;
    if (key !== undefined && served.key !== key) return undefined;
    key = served.key;
    since = Math.max(since, envSince);
  }
  const first = flag.environments[ENVIRONMENTS[0]].served;
  return first.kind === 'one' ? { value: JSON.stringify(first.value), since } : undefined;
}

function noEvaluationsMessage(flag: FlagHealthInput, settings: HealthSettings): string {
  if (flag.lastEvaluatedAt !== undefined) {
    return `no evaluations: not evaluated in any environment since ${day(flag.lastEvaluatedAt)}`;
  }
  const days = Math.min(settings.staleAfterDays, settings.countsKeptDays);
  const kept = settings.staleAfterDays > settings.countsKeptDays ? ` (evaluation counts are kept for ${settings.countsKeptDays} days)` : '';
  return `no evaluations: not evaluated in any environment ${windowWords(days)}${kept}`;
}

/**
 * "in the last 30 days", "in the last 6 hours", "in the last 15 minutes": a window under a day in the unit that
 * says it (not "0 days"). Under a minute, "this hour": counts are per hour, so none this hour is what is known.
 */
function windowWords(days: number): string {
  if (days >= 1) return `in the last ${plural(days, 'day')}`;
  if (days * 24 >= 1) return `in the last ${plural(days * 24, 'hour')}`;
  if (days * 1440 >= 1) return `in the last ${plural(days * 1440, 'minute')}`;
  return 'this hour';
}

/**
 * The moment a flag expires: a date (`2027-03-31`) means the end of that day in UTC, a date-time that
 * moment. Undefined when absent or unreadable (the schema refuses such a file; nothing expires on a guess).
 */
export function expiryTime(expiresAt: string | undefined): number | undefined {
  if (expiresAt === undefined) return undefined;
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(expiresAt);
  if (date) return Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]) + 1);
  const t = Date.parse(expiresAt);
  return Number.isFinite(t) ? t : undefined;
}

function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function plural(n: number, word: string): string {
  const text = Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100);
  return `${text} ${word}${n === 1 ? '' : 's'}`;
}
