import type { JsonValue, Rule } from '../types.js';

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
