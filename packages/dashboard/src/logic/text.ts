import type { JsonValue, Rule } from '../types.js';

/** A value as people read it in a table cell: compact JSON, long ones shortened. */
export function shortValue(value: JsonValue, max = 60): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `2026-11-21 12:01:05`: local time, to the second, sortable. */
export function localTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** The local timezone's short name at that moment (`CET`, `GMT+2`), as the browser names it. */
export function zoneName(date: Date, locale?: string): string {
  const part = new Intl.DateTimeFormat(locale ?? 'en-GB', { timeZoneName: 'short' })
    .formatToParts(date)
    .find((p) => p.type === 'timeZoneName');
  return part?.value ?? '';
}

/** `2026-11-21 13:01:05 CET`: local time with the timezone, so nobody has to guess which clock it is. */
export function localTimeWithZone(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const zone = zoneName(d);
  return zone === '' ? localTime(iso) : `${localTime(iso)} ${zone}`;
}

/** `2026-11-21 12:01:05 UTC`: for hover titles beside local times. */
export function utcTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 19)} UTC`;
}

const MONTH_NAMES = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Relative times read well up to a week; beyond, "630 d ago" says less than the date. */
const RELATIVE_UP_TO_S = 7 * 86400;

/** `3 min ago` for recent moments, `on 2 Mar 2025` (local date) for older ones. */
export function when(iso: string, now: number): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  if ((now - d.getTime()) / 1000 < RELATIVE_UP_TO_S) return ago(iso, now);
  return `on ${d.getDate()} ${MONTH_NAMES[d.getMonth()]} ${d.getFullYear()}`;
}

/**
 * `3 min ago`: for kill banners, where how long matters more than when. Minutes at the finest, so a page that
 * redraws once a minute is never out of date.
 */
export function ago(iso: string, now: number): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (!Number.isFinite(seconds)) return iso;
  if (seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

function operand(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(operand).join(', ')}]`;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** One line per rule, for tooltips and the promotion preview: `serve on if country in [DE, FR] (50%)`. */
export function describeRule(rule: Rule): string {
  const conditions = (rule.conditions ?? []).map((c) => `${c.attribute} ${c.op} ${operand(c.value)}`);
  const when = conditions.length === 0 ? 'always' : `if ${conditions.join(' and ')}`;
  const share = rule.rolloutPct === undefined ? '' : ` (${rule.rolloutPct}%)`;
  const label = rule.description ? ` — ${rule.description}` : '';
  return `serve ${rule.serve} ${when}${share}${label}`;
}
