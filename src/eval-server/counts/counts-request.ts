import { InvalidInputError } from '../../errors/kinds.js';
import { HOUR_MS, hourStart, oldestKeptHour } from '../../stats/hours.js';

/** At most this many entries in one POST /v1/counts; SDKs split larger reports. */
export const MAX_COUNT_ENTRIES = 1000;

/** The variations the evaluation core serves (docs/evaluation.md); anything else cannot come from an SDK. */
const VARIATIONS = new Set(['on', 'off', 'default']);

export interface CountReportEntry {
  flagKey: string;
  variation: string;
  hourStartMs: number;
  count: number;
}

export interface CountRules {
  /** Whether the key's environment has this flag. */
  hasFlag(flagKey: string): boolean;
  /** Epoch milliseconds. */
  now: number;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const ENTRY_FIELDS = new Set(['flagKey', 'variation', 'hour', 'count']);

/**
 * Checks a whole report before any of it is counted, so a report is taken entirely or not at all and a
 * client that gets 400 knows nothing of it was kept (docs/sdk.md, "Evaluation counts").
 */
export function parseCountReport(body: unknown, rules: CountRules): CountReportEntry[] {
  if (!isPlainObject(body)) throw new InvalidInputError('the body must be a JSON object { counts: [...] }', 'body');
  for (const field of Object.keys(body)) if (field !== 'counts') throw new InvalidInputError(`unknown field ${field}; expected counts`, field);
  const { counts } = body;
  if (!Array.isArray(counts)) throw new InvalidInputError('counts must be an array', 'counts');
  if (counts.length > MAX_COUNT_ENTRIES) throw new InvalidInputError(`counts may hold at most ${MAX_COUNT_ENTRIES} entries per report, got ${counts.length}`, 'counts');
  const oldest = oldestKeptHour(rules.now);
  const newest = hourStart(rules.now) + HOUR_MS; // an hour ahead allows for clock skew
  return counts.map((entry, i) => parseEntry(entry, `counts[${i}]`, rules, oldest, newest));
}

function parseEntry(entry: unknown, at: string, rules: CountRules, oldest: number, newest: number): CountReportEntry {
  if (!isPlainObject(entry)) throw new InvalidInputError(`${at} must be an object { flagKey, variation, hour, count }`, at);
  for (const field of Object.keys(entry)) {
    if (!ENTRY_FIELDS.has(field)) throw new InvalidInputError(`unknown field ${at}.${field}; expected flagKey, variation, hour and count`, `${at}.${field}`);
  }
  const { flagKey, variation, hour, count } = entry;
  if (typeof flagKey !== 'string' || flagKey === '') throw new InvalidInputError(`${at}.flagKey must be a flag key`, `${at}.flagKey`);
  if (!rules.hasFlag(flagKey)) throw new InvalidInputError(`${at}.flagKey: this environment has no flag ${flagKey}`, `${at}.flagKey`);
  if (typeof variation !== 'string' || !VARIATIONS.has(variation)) {
    throw new InvalidInputError(`${at}.variation must be on, off or default`, `${at}.variation`);
  }
  const hourMs = typeof hour === 'string' ? Date.parse(hour) : Number.NaN;
  if (!Number.isFinite(hourMs) || hourMs % HOUR_MS !== 0) {
    throw new InvalidInputError(`${at}.hour must be the ISO-8601 start of an hour, like 2026-03-01T12:00:00.000Z`, `${at}.hour`);
  }
  if (hourMs < oldest) throw new InvalidInputError(`${at}.hour is more than 30 days old; such counts are no longer kept`, `${at}.hour`);
  if (hourMs > newest) throw new InvalidInputError(`${at}.hour is in the future`, `${at}.hour`);
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count <= 0) {
    throw new InvalidInputError(`${at}.count must be a positive whole number`, `${at}.count`);
  }
  return { flagKey, variation, hourStartMs: hourMs, count };
}
