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
