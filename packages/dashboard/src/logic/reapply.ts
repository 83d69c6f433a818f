import { canonicalJson } from '@flagops/core';
import type { Rule } from '../types.js';

/** What the editor holds, besides the rules: the texts as typed. */
export interface EditedFields {
  enabled: boolean;
  rolloutPct: string;
  valueOn: string;
  valueOff: string;
}

const same = (a: unknown, b: unknown) => canonicalJson(a as never) === canonicalJson(b as never);

/**
 * The person's edits replayed on a config someone else changed meanwhile (after a 409): each field the
 * person changed takes their value, every other field the fresh one. Three-way, like a merge: `base` is the
 * version they started from.
 */
export function reapplyFields(base: EditedFields, mine: EditedFields, fresh: EditedFields): EditedFields {
  const out = { ...fresh };
  for (const field of ['enabled', 'rolloutPct', 'valueOn', 'valueOff'] as const) {
    if (!same(base[field], mine[field])) (out as Record<string, unknown>)[field] = mine[field];
  }
  return out;
}

/**
 * The same for rules, rule by rule (ids name the same rule on every side): rules the person removed go, rules
 * they changed take their content, rules they added are placed after the rule they followed, and when they
 * reordered rules, those rules take the person's order. Everything else someone else did stays.
 */
export function reapplyRules(base: readonly Rule[], mine: readonly Rule[], fresh: readonly Rule[]): Rule[] {
  const baseById = new Map(base.map((r) => [r.id, r]));
  const mineById = new Map(mine.map((r) => [r.id, r]));
  let out: Rule[] = fresh.filter((r) => !(baseById.has(r.id) && !mineById.has(r.id)));
  out = out.map((r) => {
    const was = baseById.get(r.id);
    const now = mineById.get(r.id);
    return was && now && !same(was, now) ? now : r;
  });
  // Changed by the person, removed by someone else: the person's edit wins, as a rule added.
  const present = () => new Set(out.map((r) => r.id));
  mine.forEach((rule, i) => {
    if (present().has(rule.id)) return;
    const was = baseById.get(rule.id);
    if (was && same(was, rule)) return; // removed by someone else and untouched by the person: stays removed
    const before = mine
      .slice(0, i)
      .reverse()
      .find((r) => present().has(r.id));
    const at = before ? out.findIndex((r) => r.id === before.id) + 1 : 0;
    out.splice(at, 0, rule);
  });
  // Reordered by the person: the rules of both lists take the person's relative order, in the slots they hold.
  const keptBase = base.filter((r) => mineById.has(r.id)).map((r) => r.id);
  const keptMine = mine.filter((r) => baseById.has(r.id)).map((r) => r.id);
  if (!same(keptBase, keptMine)) {
    const order = mine.map((r) => r.id).filter((id) => out.some((r) => r.id === id));
    const slots = out.map((r, i) => (order.includes(r.id) ? i : -1)).filter((i) => i >= 0);
    const byId = new Map(out.map((r) => [r.id, r]));
    slots.forEach((slot, k) => {
      out[slot] = byId.get(order[k])!;
    });
  }
  return out;
}
