import type { JsonValue, Rule } from '../types.js';

/** Plain scalars YAML 1.2 would read as something other than the same string. */
const NOT_A_STRING =
  /^(?:[-+]?(?:\.\d+|\d+(?:\.\d*)?)(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o[0-7]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|true|True|TRUE|false|False|FALSE|null|Null|NULL|~)$/;
/** Strings that need no quotes: a letter, digit or _ first, then nothing YAML gives a meaning to. */
const PLAIN = /^[A-Za-z0-9_][A-Za-z0-9_.\-/]*$/;

/** One JSON value as YAML: plain where that reads back as the same value, JSON (which YAML reads) elsewhere. */
export function yamlScalar(value: JsonValue): string {
  if (typeof value === 'string') return PLAIN.test(value) && !NOT_A_STRING.test(value) ? value : JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(yamlScalar).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{ ${Object.entries(value)
      .map(([k, v]) => `${yamlScalar(k)}: ${yamlScalar(v)}`)
      .join(', ')} }`;
  }
  return JSON.stringify(value);
}

/**
 * Rules as the YAML the flags repository holds (docs/flags-repository.md), for the rules editor. Ids are kept,
 * so re-saving unchanged rules changes nothing. No rules is an empty text.
 */
export function rulesToYaml(rules: Rule[]): string {
  const lines: string[] = [];
  for (const rule of rules) {
    lines.push(`- id: ${yamlScalar(rule.id)}`);
    if (rule.description !== undefined) lines.push(`  description: ${yamlScalar(rule.description)}`);
    lines.push(`  serve: ${rule.serve}`);
    if (rule.rolloutPct !== undefined) lines.push(`  rolloutPct: ${rule.rolloutPct}`);
    const conditions = rule.conditions ?? [];
    if (conditions.length === 0) {
      lines.push('  conditions: []');
      continue;
    }
    lines.push('  conditions:');
    for (const c of conditions) {
      // A segment condition (in_segment, not_in_segment) has no attribute.
      if (c.attribute === undefined) lines.push(`    - op: ${c.op}`);
      else {
        lines.push(`    - attribute: ${yamlScalar(c.attribute)}`);
        lines.push(`      op: ${c.op}`);
      }
      lines.push(`      value: ${yamlScalar(c.value)}`);
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** Shown in an empty rules box: the shape of a rule, as a start. */
export const RULES_PLACEHOLDER = `# No rules. A rule, for example:
# - description: EU customers
#   serve: on
#   conditions:
#     - attribute: country
#       op: in
#       value: [DE, FR]`;
