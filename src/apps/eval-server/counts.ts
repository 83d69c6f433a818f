import type Koa from 'koa';
import { statsScope } from '../../features/stats/evaluation-counter.js';
import { HOUR_MS, hourStart, oldestKeptHour } from '../../features/stats/hours.js';
import { InvalidInputError } from '../../foundations/errors/kinds.js';
import { readJsonBody } from '../../foundations/http/read-json-body.js';
import { type CountRules, servesVariation, viewCountRules } from './count-rules.js';
import { type EvalAppDeps, viewFor } from './main-view-source.js';

/** At most this many entries in one POST /v1/counts; SDKs split larger reports. */
export const MAX_COUNT_ENTRIES = 1000;

/**
 * The largest count one entry of a report may carry: 100,000 evaluations a second of one flag in one
 * process, over the SDK's default 10 s interval. SDK keys are publishable, so whoever holds one can report;
 * the bound keeps one report from burying a chart under made-up numbers. SDKs split larger counts.
 */
export const MAX_ENTRY_COUNT = 1_000_000;

export interface CountReportEntry {
  flagKey: string;
  variation: string;
  hourStartMs: number;
  count: number;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const ENTRY_FIELDS = new Set(['flagKey', 'variation', 'hour', 'count']);

/**
 * Checks a whole report before any of it is counted, so a malformed report is refused entirely and a client
 * that gets 400 knows nothing of it was kept (docs/sdk.md, "Evaluation counts"). An entry of a flag or
 * variation the environment does not serve is well formed but not counted (`ignored`), as for exposures: an
 * SDK whose snapshot was a moment behind (the flag was just removed) must not lose the rest of its report.
 */
export function parseCountReport(body: unknown, rules: CountRules): { entries: CountReportEntry[]; ignored: number } {
  if (!isPlainObject(body)) throw new InvalidInputError('the body must be a JSON object { counts: [...] }', 'body');
  for (const field of Object.keys(body))
    if (field !== 'counts') throw new InvalidInputError(`unknown field ${field}; expected counts`, field);
  const { counts } = body;
  if (!Array.isArray(counts)) throw new InvalidInputError('counts must be an array', 'counts');
  if (counts.length > MAX_COUNT_ENTRIES)
    throw new InvalidInputError(`counts may hold at most ${MAX_COUNT_ENTRIES} entries per report, got ${counts.length}`, 'counts');
  const oldest = oldestKeptHour(rules.now);
  const newest = hourStart(rules.now) + HOUR_MS; // an hour ahead allows for clock skew
  const seen = new Set<string>();
  const entries: CountReportEntry[] = [];
  let ignored = 0;
  counts.forEach((entry, i) => {
    const at = `counts[${i}]`;
    const parsed = parseEntry(entry, at, rules, oldest, newest);
    // One entry per flag, variation and hour: repeating one would add up past the bound of an entry.
    const cell = `${parsed.flagKey}\u0000${parsed.variation}\u0000${parsed.hourStartMs}`;
    if (seen.has(cell))
      throw new InvalidInputError(`${at} repeats the flag, variation and hour of an earlier entry; add them up into one`, at);
    seen.add(cell);
    if (servesVariation(rules, parsed.flagKey, parsed.variation)) entries.push(parsed);
    else ignored++;
  });
  return { entries, ignored };
}

function parseEntry(entry: unknown, at: string, rules: CountRules, oldest: number, newest: number): CountReportEntry {
  if (!isPlainObject(entry)) throw new InvalidInputError(`${at} must be an object { flagKey, variation, hour, count }`, at);
  for (const field of Object.keys(entry)) {
    if (!ENTRY_FIELDS.has(field))
      throw new InvalidInputError(`unknown field ${at}.${field}; expected flagKey, variation, hour and count`, `${at}.${field}`);
  }
  const { flagKey, variation, hour, count } = entry;
  if (typeof flagKey !== 'string' || flagKey === '') throw new InvalidInputError(`${at}.flagKey must be a flag key`, `${at}.flagKey`);
  if (typeof variation !== 'string' || variation === '')
    throw new InvalidInputError(`${at}.variation must be on, off, default or a variant of the flag`, `${at}.variation`);
  const hourMs = typeof hour === 'string' ? Date.parse(hour) : Number.NaN;
  if (!Number.isFinite(hourMs) || hourMs % HOUR_MS !== 0) {
    throw new InvalidInputError(`${at}.hour must be the ISO-8601 start of an hour, like 2026-03-01T12:00:00.000Z`, `${at}.hour`);
  }
  if (hourMs < oldest) throw new InvalidInputError(`${at}.hour is more than 30 days old; such counts are no longer kept`, `${at}.hour`);
  if (hourMs > newest) throw new InvalidInputError(`${at}.hour is in the future`, `${at}.hour`);
  const maxCount = rules.maxCount ?? MAX_ENTRY_COUNT;
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count <= 0 || count > maxCount) {
    throw new InvalidInputError(`${at}.count must be a whole number from 1 to ${maxCount.toLocaleString('en-US')}`, `${at}.count`);
  }
  return { flagKey, variation, hourStartMs: hourMs, count };
}

/**
 * POST /v1/counts: evaluation counts an SDK made locally, added to the same hourly stats the server's own
 * evaluations feed. 202: the counts are in memory and reach the disk with the next stats flush.
 */
export async function countsRoute(ctx: Koa.Context, deps: EvalAppDeps): Promise<void> {
  const view = viewFor(ctx, deps);
  const { entries, ignored } = parseCountReport(await readJsonBody(ctx.req), viewCountRules(view, Date.now()));
  const scope = statsScope(view.org, view.projectId, view.environment);
  let accepted = 0;
  for (const e of entries) if (deps.counter.add(scope, e.flagKey, e.variation, e.hourStartMs, e.count)) accepted++;
  ctx.status = 202;
  ctx.body = ignored > 0 ? { accepted, ignored } : { accepted };
}
