import { randomBytes } from 'node:crypto';
import type { Condition, Rule } from '@flagops/core';
import { jsonEqual } from '../../foundations/repository/json-equal.js';
import type { RuleInput } from '../../foundations/validation/api-bodies.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** `r_` and 8 random characters: short enough to read in a YAML review, ~41 bits apart. */
export function randomRuleId(random: (size: number) => Buffer = randomBytes): string {
  let id = 'r_';
  for (const byte of random(8)) id += ALPHABET[byte % ALPHABET.length];
  return id;
}

/** A rule's fields in the stored order (as the repository normalizes them), without its id. */
function ruleContent(input: RuleInput | Rule): Omit<Rule, 'id'> {
  const rule = {} as Omit<Rule, 'id'>;
  if (input.description !== undefined) rule.description = input.description;
  rule.serve = input.serve;
  if (input.rolloutPct !== undefined) rule.rolloutPct = input.rolloutPct;
  rule.conditions = (input.conditions ?? []).map((c: Condition) => ({ attribute: c.attribute, op: c.op, value: c.value }));
  return rule;
}

/**
 * Rules as sent, with ids: a sent id is kept; a rule without one keeps the id of the current rule
 * at the same position when its content is unchanged (so re-sending the same rules is not a change), and gets
 * a fresh one otherwise. Sent ids are unique already (the body validation refuses duplicates).
 */
export function assignRuleIds(sent: readonly RuleInput[], current: readonly Rule[], newId: () => string = randomRuleId): Rule[] {
  const used = new Set<string>();
  for (const rule of sent) if (rule.id !== undefined) used.add(rule.id);
  return sent.map((input, index) => {
    const content = ruleContent(input);
    let id = input.id;
    if (id === undefined) {
      const same = current[index];
      if (same && !used.has(same.id) && jsonEqual(ruleContent(same) as never, content as never)) id = same.id;
      else
        do id = newId();
        while (used.has(id));
      used.add(id);
    }
    return { id, ...content };
  });
}
