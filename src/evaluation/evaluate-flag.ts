import type { EvaluationContext, EvaluationResult } from '../model/index.js';
import { readAttribute } from './attribute.js';
import { resumeBucket } from './bucket.js';
import type { CompiledFlag, CompiledRule } from './compiled-flag.js';
import { conditionHolds } from './operators.js';

/** A rule matches when all its conditions hold; none: always (contract §4 step 4). */
export function ruleMatches(rule: CompiledRule, context: EvaluationContext): boolean {
  const conditions = rule.conditions;
  for (let i = 0; i < conditions.length; i++) {
    const c = conditions[i];
    if (!conditionHolds(c, readAttribute(context, c))) return false;
  }
  return true;
}

/**
 * The user id that bucketing uses: a non-empty string, or null. An empty or non-string id would put every
 * anonymous caller in one bucket, so it counts as "no userId".
 */
export function bucketingId(context: EvaluationContext): string | null {
  const userId = context.userId;
  return typeof userId === 'string' && userId.length > 0 ? userId : null;
}

export function bucketOf(flag: CompiledFlag, userId: string): number {
  return resumeBucket(flag.prefixH, flag.prefixK, flag.prefixN, flag.prefixLen, userId);
}

/**
 * Contract §4, in order: killed, archived, disabled, rules, rollout. Allocates only the result.
 * `bucket` is reported by the step that used it: a rule with rolloutPct, or a rollout strictly between 0 and 100.
 */
export function evaluateFlag(flag: CompiledFlag, context: EvaluationContext, killed: boolean): EvaluationResult {
  if (killed) return { value: flag.valueOff, reason: 'killed', variation: 'off' };
  if (flag.archived) return { value: flag.defaultValue, reason: 'archived', variation: 'default' };
  if (!flag.enabled) return { value: flag.valueOff, reason: 'flag_disabled', variation: 'off' };

  const userId = bucketingId(context);
  let b = -1; // one bucket per evaluation, computed when first needed
  const rules = flag.rules;
  for (let r = 0; r < rules.length; r++) {
    const rule = rules[r];
    if (!ruleMatches(rule, context)) continue;
    if (!rule.hasRollout) {
      return rule.serveOn
        ? { value: flag.valueOn, reason: 'rule_match', variation: 'on', ruleId: rule.id }
        : { value: flag.valueOff, reason: 'rule_match', variation: 'off', ruleId: rule.id };
    }
    if (userId === null) continue;
    if (b < 0) b = bucketOf(flag, userId);
    if (b < rule.rolloutPct) {
      return rule.serveOn
        ? { value: flag.valueOn, reason: 'rule_match', variation: 'on', ruleId: rule.id, bucket: b }
        : { value: flag.valueOff, reason: 'rule_match', variation: 'off', ruleId: rule.id, bucket: b };
    }
  }

  const pct = flag.rolloutPct;
  if (pct >= 100) return { value: flag.valueOn, reason: 'default', variation: 'on' };
  if (!(pct > 0)) return { value: flag.valueOff, reason: 'default', variation: 'off' };
  if (userId === null) return { value: flag.valueOff, reason: 'rollout', variation: 'off' };
  if (b < 0) b = bucketOf(flag, userId);
  return b < pct
    ? { value: flag.valueOn, reason: 'rollout', variation: 'on', bucket: b }
    : { value: flag.valueOff, reason: 'rollout', variation: 'off', bucket: b };
}
