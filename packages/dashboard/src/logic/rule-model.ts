import type { Operator } from '@flagops/core';
import type { Condition, JsonValue, Rule } from '../types.js';

export type ConditionOp = Condition['op'];

/** What a condition's value is edited with: it follows from the operator. */
export type ValueEditor = 'scalar' | 'list' | 'text' | 'number' | 'version' | 'segment';

export interface OperatorChoice {
  op: ConditionOp;
  /** How the operator reads in a sentence: "country is one of DE, FR". */
  words: string;
  editor: ValueEditor;
}

/** The operators, grouped by the kind of value they compare, in the order the builder lists them. */
export const OPERATOR_GROUPS: ReadonlyArray<{ label: string; choices: readonly OperatorChoice[] }> = [
  {
    label: 'Any value',
    choices: [
      { op: 'eq', words: 'is', editor: 'scalar' },
      { op: 'neq', words: 'is not', editor: 'scalar' },
      { op: 'contains', words: 'contains', editor: 'text' },
    ],
  },
  {
    label: 'List',
    choices: [
      { op: 'in', words: 'is one of', editor: 'list' },
      { op: 'not_in', words: 'is none of', editor: 'list' },
    ],
  },
  {
    label: 'Number',
    choices: [
      { op: 'gt', words: 'is greater than', editor: 'number' },
      { op: 'gte', words: 'is at least', editor: 'number' },
      { op: 'lt', words: 'is less than', editor: 'number' },
      { op: 'lte', words: 'is at most', editor: 'number' },
    ],
  },
  {
    label: 'Version (semver)',
    choices: [
      { op: 'semver_eq', words: 'is version', editor: 'version' },
      { op: 'semver_gt', words: 'is a version after', editor: 'version' },
      { op: 'semver_lt', words: 'is a version before', editor: 'version' },
    ],
  },
  {
    label: 'Segment',
    choices: [
      { op: 'in_segment', words: 'is in segment', editor: 'segment' },
      { op: 'not_in_segment', words: 'is not in segment', editor: 'segment' },
    ],
  },
];

const CHOICES = new Map(OPERATOR_GROUPS.flatMap((g) => g.choices.map((c) => [c.op, c] as const)));

export function operatorChoice(op: ConditionOp): OperatorChoice {
  return CHOICES.get(op) ?? { op, words: op, editor: 'scalar' };
}

export const isSegmentOp = (op: ConditionOp): boolean => op === 'in_segment' || op === 'not_in_segment';

/**
 * A number typed where the operator wants one: the number when the text is one, else the text itself, so
 * the server's check names the row ("must be a number for op gt") instead of the page guessing.
 */
export function numberOrText(text: string): JsonValue {
  const trimmed = text.trim();
  const n = Number(trimmed);
  return trimmed !== '' && Number.isFinite(n) ? n : text;
}

/** The value carried over when the operator changes, so switching `eq` to `in` keeps what was typed. */
export function convertValue(value: JsonValue, to: ConditionOp): JsonValue {
  const editor = operatorChoice(to).editor;
  const first = Array.isArray(value) ? (value[0] ?? '') : value;
  switch (editor) {
    case 'list':
      return Array.isArray(value) ? value : value === '' || value === null ? [] : [value];
    case 'number':
      return typeof first === 'number' ? first : numberOrText(String(first ?? ''));
    case 'segment':
    case 'version':
    case 'text':
      return typeof first === 'string' ? first : first === null ? '' : String(first);
    default:
      return first ?? '';
  }
}

/** A condition after its operator changed: a segment condition has no attribute, any other one has. */
export function withOperator(condition: Condition, op: ConditionOp): Condition {
  const value = convertValue(condition.value, op);
  if (isSegmentOp(op)) return { op, value };
  return { attribute: condition.attribute ?? '', op: op as Operator, value };
}

/** What the scalar editor (`eq`, `neq`) shows as the value's type. */
export type ScalarType = 'text' | 'number' | 'boolean';

export function scalarTypeOf(value: JsonValue): ScalarType {
  return typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : 'text';
}

/** The scalar a value input holds under the chosen type (a number that does not parse stays text, for the server to name). */
export function scalarOf(type: ScalarType, text: string): JsonValue {
  if (type === 'number') return numberOrText(text);
  if (type === 'boolean') return text === 'true';
  return text;
}

/** Chips typed into a list editor: split on commas, trimmed, empty ones dropped, each member once. */
export function addChips(list: readonly JsonValue[], typed: string): JsonValue[] {
  const out = [...list];
  for (const part of typed.split(',')) {
    const member = part.trim();
    if (member !== '' && !out.some((m) => m === member || String(m) === member)) out.push(member);
  }
  return out;
}

/** `r_` and 8 random characters, like the ids the server gives rules sent without one. */
export function newRuleId(taken: ReadonlySet<string>, random: () => number = Math.random): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  for (;;) {
    let id = 'r_';
    for (let i = 0; i < 8; i++) id += alphabet[Math.floor(random() * alphabet.length)];
    if (!taken.has(id)) return id;
  }
}

export function emptyCondition(): Condition {
  return { attribute: '', op: 'eq', value: '' };
}

export function newRule(rules: readonly Rule[], random?: () => number): Rule {
  return { id: newRuleId(new Set(rules.map((r) => r.id)), random), serve: 'on', conditions: [emptyCondition()] };
}

/** The rules with the one at `from` moved to `to` (both clamped to the list). */
export function moveRule<T>(rules: readonly T[], from: number, to: number): T[] {
  const out = [...rules];
  if (from < 0 || from >= out.length) return out;
  const [moved] = out.splice(from, 1);
  out.splice(Math.max(0, Math.min(out.length, to)), 0, moved);
  return out;
}

/** Where a validation message belongs in the builder: a rule, one of its conditions, or the rules as a whole. */
export interface RowPlace {
  rule: number | null;
  condition: number | null;
}

const RULE_FIELD = /^rules\[(\d+)\](?:\.conditions\[(\d+)\])?/;

/** `rules[1].conditions[0].value` → rule 1, condition 0; `rules` → the whole list; anything else: null. */
export function placeOf(field: string): RowPlace | null {
  if (field === 'rules') return { rule: null, condition: null };
  const m = RULE_FIELD.exec(field);
  if (!m) return null;
  return { rule: Number(m[1]), condition: m[2] === undefined ? null : Number(m[2]) };
}

/**
 * The field a refused save names at the start of its message (`rules[1].conditions[0].value: must be …`), so
 * a 400 from the server is shown at its row too.
 */
export function fieldOfMessage(message: string): { field: string; message: string } | null {
  const m = /^((?:rules|enabled|rolloutPct|valueOn|valueOff)(?:\[\d+\]|\.[A-Za-z]+)*):?\s+(.*)$/s.exec(message);
  return m ? { field: m[1], message: m[2] } : null;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Rules read from YAML text, with or without issues, in the shape the builder draws; null when they are not
 * a list of rules with lists of conditions (the builder then keeps its rows and says the text cannot be shown).
 * Values stay as typed, so the server's messages still fit the rows.
 */
export function rulesForBuilder(value: unknown): Rule[] | null {
  if (!Array.isArray(value)) return null;
  const rules: Rule[] = [];
  for (const raw of value) {
    if (!isObject(raw)) return null;
    const conditions = raw.conditions ?? [];
    if (!Array.isArray(conditions) || !conditions.every(isObject)) return null;
    const rule = { id: String(raw.id ?? ''), serve: String(raw.serve ?? 'on') } as Rule;
    if (raw.description !== undefined) rule.description = String(raw.description);
    if (raw.rolloutPct !== undefined) rule.rolloutPct = raw.rolloutPct as number;
    rule.conditions = conditions.map((c) => {
      const op = String(c.op ?? 'eq') as Condition['op'];
      const value = (c.value ?? '') as JsonValue;
      return isSegmentOp(op) ? { op, value } : { attribute: String(c.attribute ?? ''), op, value };
    });
    rules.push(rule);
  }
  return rules;
}
