import { conditionHolds, readAttribute } from './conditions.js';
import { bucketingId, bucketOf, CompiledFlag, ruleMatches } from './evaluate.js';
import type { Condition, EvaluationContext, EvaluationResult, SnapshotFlag } from './model.js';

export interface ConditionTrace {
  attribute: string;
  op: string;
  value: unknown;
  /** The value the condition tested; undefined (absent in JSON) when the attribute is missing. */
  actual: unknown;
  holds: boolean;
}

export interface EvaluationStep {
  step: 'killed' | 'archived' | 'enabled' | 'rule' | 'rollout';
  ruleId?: string;
  /** A sentence for people and agents; not meant to be parsed. */
  outcome: string;
  conditions?: ConditionTrace[];
}

export interface EvaluationExplanation {
  result: EvaluationResult;
  /** The evaluation steps taken, in order; the last one decided the result. */
  steps: EvaluationStep[];
}

function traceConditions(flag: CompiledFlag, raw: readonly Condition[], context: EvaluationContext, r: number): ConditionTrace[] {
  return flag.rules[r].conditions.map((c, i) => {
    const actual = readAttribute(context, c);
    // An inherited property ("constructor") fails every operator; show it as the missing attribute it is.
    const shown = c.readsUserId && context.userId !== undefined ? actual : ownAttribute(context, c.attribute);
    return { attribute: raw[i].attribute, op: raw[i].op, value: raw[i].value, actual: shown, holds: conditionHolds(c, actual) };
  });
}

function ownAttribute(context: EvaluationContext, name: string): unknown {
  const attributes = context.attributes;
  return attributes != null && Object.hasOwn(attributes, name) ? attributes[name] : undefined;
}

/**
 * Which evaluation step decided a flag's value for a context, and why (for the MCP explain tool).
 * Walks the same compiled rules, operators and bucket as `evaluate`, and agrees with it on every result.
 * `killed`, when given, overrides the flag's own `killed` field, as the server's kill overlay does.
 */
export function explainEvaluation(
  snapshotFlag: SnapshotFlag,
  flagKey: string,
  context: EvaluationContext,
  killed?: boolean,
): EvaluationExplanation {
  const flag = new CompiledFlag(flagKey, snapshotFlag);
  const ctx = context ?? {};
  const steps: EvaluationStep[] = [];
  const done = (result: EvaluationResult, step: EvaluationStep): EvaluationExplanation => {
    steps.push(step);
    return { result, steps };
  };

  if (killed ?? flag.killed) {
    return done({ value: flag.valueOff, reason: 'killed', variation: 'off' }, { step: 'killed', outcome: 'killed: serves valueOff' });
  }
  steps.push({ step: 'killed', outcome: 'not killed' });
  if (flag.archived) {
    return done(
      { value: flag.defaultValue, reason: 'archived', variation: 'default' },
      { step: 'archived', outcome: 'archived: serves defaultValue' },
    );
  }
  steps.push({ step: 'archived', outcome: 'not archived' });
  if (!flag.enabled) {
    return done(
      { value: flag.valueOff, reason: 'flag_disabled', variation: 'off' },
      { step: 'enabled', outcome: 'disabled: serves valueOff' },
    );
  }
  steps.push({ step: 'enabled', outcome: 'enabled' });

  const userId = bucketingId(ctx);
  const b = userId === null ? -1 : bucketOf(flag, userId);
  for (let r = 0; r < flag.rules.length; r++) {
    const rule = flag.rules[r];
    const step: EvaluationStep = {
      step: 'rule',
      ruleId: rule.id,
      outcome: '',
      conditions: traceConditions(flag, snapshotFlag.rules[r].conditions ?? [], ctx, r),
    };
    const served = rule.serveOn ? 'valueOn' : 'valueOff';
    const result: EvaluationResult = {
      value: rule.serveOn ? flag.valueOn : flag.valueOff,
      reason: 'rule_match',
      variation: rule.serveOn ? 'on' : 'off',
      ruleId: rule.id,
    };
    if (!ruleMatches(rule, ctx)) {
      step.outcome = 'does not match: not every condition holds';
    } else if (!rule.hasRollout) {
      step.outcome = `matches: serves ${served}`;
      return done(result, step);
    } else if (userId === null) {
      step.outcome = `matches, but its rolloutPct ${rule.rolloutPct} needs a userId: does not apply`;
    } else if (b < rule.rolloutPct) {
      step.outcome = `matches and bucket ${b} < rolloutPct ${rule.rolloutPct}: serves ${served}`;
      result.bucket = b;
      return done(result, step);
    } else {
      step.outcome = `matches, but bucket ${b} is not below rolloutPct ${rule.rolloutPct}: does not apply`;
    }
    steps.push(step);
  }

  const pct = flag.rolloutPct;
  const serve = (on: boolean, reason: 'default' | 'rollout', outcome: string, bucket?: number): EvaluationExplanation => {
    const result: EvaluationResult = { value: on ? flag.valueOn : flag.valueOff, reason, variation: on ? 'on' : 'off' };
    if (bucket !== undefined) result.bucket = bucket;
    return done(result, { step: 'rollout', outcome });
  };
  if (pct >= 100) return serve(true, 'default', `rolloutPct ${pct}: serves valueOn`);
  if (!(pct > 0)) return serve(false, 'default', `rolloutPct ${pct}: serves valueOff`);
  if (userId === null) return serve(false, 'rollout', `rolloutPct ${pct} needs a userId to bucket: serves valueOff`);
  return b < pct
    ? serve(true, 'rollout', `bucket ${b} < rolloutPct ${pct}: serves valueOn`, b)
    : serve(false, 'rollout', `bucket ${b} is not below rolloutPct ${pct}: serves valueOff`, b);
}
