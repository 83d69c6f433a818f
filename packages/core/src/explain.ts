import { type CompiledCondition, type CompiledSegment, conditionHolds, conditionHoldsFor, inSegment, readAttribute } from './conditions.js';
import {
  bucketingId,
  bucketOf,
  CompiledEnvironment,
  type CompiledFlag,
  type CompiledRule,
  evaluateFlag,
  type PrerequisiteMemo,
  ruleMatches,
} from './evaluate.js';
import type { Condition, EvaluationContext, EvaluationResult, SnapshotFlag, SnapshotSegment } from './model.js';

export interface ConditionTrace {
  /** Absent for segment conditions, which test membership rather than one attribute. */
  attribute?: string;
  op: string;
  value: unknown;
  /** The value the condition tested; undefined (absent in JSON) when the attribute is missing or for a segment. */
  actual: unknown;
  holds: boolean;
  /** For in_segment/not_in_segment: whether the context is in the segment, and why. */
  segment?: SegmentTrace;
}

export interface SegmentTrace {
  key: string;
  /** False when the environment has no segment of that key (the condition then never holds). */
  exists: boolean;
  member: boolean;
  /** Whether the context's userId is in the segment's userIds. */
  listed: boolean;
  conditions: ConditionTrace[];
}

export interface PrerequisiteTrace {
  flag: string;
  /** The variation it must serve. */
  variation: string;
  /** What it served for this context; absent when the environment has no such flag. */
  served?: string;
  reason?: string;
  holds: boolean;
}

export interface VariantTrace {
  /** Absent without a userId: the first variant with a weight above 0 is served. */
  variantBucket?: number;
  /** Each variant with the variant buckets it covers, [from, to). */
  ranges: { name: string; from: number; to: number }[];
  chosen: string;
}

export interface EvaluationStep {
  step: 'killed' | 'archived' | 'enabled' | 'prerequisites' | 'rule' | 'rollout';
  ruleId?: string;
  /** A sentence for people and agents; not meant to be parsed. */
  outcome: string;
  conditions?: ConditionTrace[];
  prerequisites?: PrerequisiteTrace[];
  /** Where the step served a variant chosen by the variant bucket. */
  variant?: VariantTrace;
}

export interface EvaluationExplanation {
  result: EvaluationResult;
  /** The evaluation steps taken, in order; the last one decided the result. */
  steps: EvaluationStep[];
}

/** The rest of the environment a flag is evaluated in: the flags its prerequisites name, and the segments. */
export interface ExplanationEnvironment {
  flags?: Record<string, SnapshotFlag>;
  segments?: Record<string, SnapshotSegment>;
  /** The kill overlay, as the server applies it to the flag's prerequisites; absent: each flag's `killed`. */
  killedKeys?: readonly string[];
}

function ownAttribute(context: EvaluationContext, name: string): unknown {
  const attributes = context.attributes;
  return attributes != null && Object.hasOwn(attributes, name) ? attributes[name] : undefined;
}

function traceAttribute(c: CompiledCondition, raw: Condition, context: EvaluationContext): ConditionTrace {
  const actual = readAttribute(context, c);
  // An inherited property ("constructor") fails every operator; show it as the missing attribute it is.
  const shown = c.readsUserId && context.userId !== undefined ? actual : ownAttribute(context, c.attribute);
  return { attribute: c.attribute, op: raw.op, value: raw.value, actual: shown, holds: conditionHolds(c, actual) };
}

function traceSegment(
  key: string,
  segment: CompiledSegment | undefined,
  raw: SnapshotSegment | undefined,
  context: EvaluationContext,
): SegmentTrace {
  if (segment === undefined) return { key, exists: false, member: false, listed: false, conditions: [] };
  const id = context.userId !== undefined ? context.userId : ownAttribute(context, 'userId');
  const conditions = segment.conditions.map((c, i) => traceAttribute(c, raw!.conditions[i], context));
  return { key, exists: true, member: inSegment(segment, context), listed: typeof id === 'string' && segment.userIds.has(id), conditions };
}

function traceConditions(
  rule: CompiledRule,
  raw: readonly Condition[],
  context: EvaluationContext,
  segments: ReadonlyMap<string, CompiledSegment>,
  rawSegments: Record<string, SnapshotSegment> | undefined,
): ConditionTrace[] {
  return rule.conditions.map((c, i) => {
    const source = raw[i];
    if (!c.isSegment) return traceAttribute(c, source, context);
    const key = String(source.value);
    const segment = traceSegment(key, segments.get(key), rawSegments?.[key], context);
    return { op: source.op, value: source.value, actual: undefined, holds: conditionHoldsFor(c, context), segment };
  });
}

function variantTrace(flag: CompiledFlag, result: EvaluationResult): VariantTrace | undefined {
  if (flag.variants === null || typeof result.variation !== 'string') return undefined;
  const ranges = flag.variants.map((v, i) => ({ name: v.name, from: (i === 0 ? 0 : flag.variants![i - 1].upTo) / 100, to: v.upTo / 100 }));
  const trace: VariantTrace = { ranges, chosen: result.variation };
  if (result.variantBucket !== undefined) trace.variantBucket = result.variantBucket;
  return trace;
}

function variantWords(trace: VariantTrace | undefined): string {
  if (trace === undefined) return '';
  if (trace.variantBucket === undefined) return `; no userId, so the first variant with a weight above 0: variant ${trace.chosen}`;
  const range = trace.ranges.find((r) => r.name === trace.chosen)!;
  return `; variant bucket ${trace.variantBucket} is in [${range.from}, ${range.to}): variant ${trace.chosen}`;
}

/**
 * Which evaluation step decided a flag's value for a context, and why (for the MCP explain tool): each
 * prerequisite with what it served, each condition with the value it tested (and, for a segment, whether the
 * context is listed or matches its conditions), the bucket, and the variant bucket with the variants' ranges.
 * Walks the same compiled flags, segments and buckets as `evaluate`, and agrees with it on every result.
 * `killed`, when given, overrides the flag's own `killed` field, as the server's kill overlay does.
 */
export function explainEvaluation(
  snapshotFlag: SnapshotFlag,
  flagKey: string,
  context: EvaluationContext,
  killed?: boolean,
  environment: ExplanationEnvironment = {},
): EvaluationExplanation {
  const compiled = new CompiledEnvironment({ ...environment.flags, [flagKey]: snapshotFlag }, environment.segments);
  const flag = compiled.flag(flagKey)!;
  const killedKeys = environment.killedKeys === undefined ? undefined : new Set(environment.killedKeys);
  const ctx = context ?? {};
  const steps: EvaluationStep[] = [];
  const done = (result: EvaluationResult, step: EvaluationStep): EvaluationExplanation => {
    steps.push(step);
    return { result, steps };
  };

  if (killed ?? (killedKeys === undefined ? flag.killed : killedKeys.has(flagKey))) {
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

  if (flag.prerequisites !== null) {
    const memo: PrerequisiteMemo = new Map();
    const traces: PrerequisiteTrace[] = [];
    let failed: string | null = null;
    for (const p of flag.prerequisites) {
      const required = p.flag;
      const served =
        required === null
          ? undefined
          : evaluateFlag(required, ctx, killedKeys === undefined ? required.killed : killedKeys.has(required.key), killedKeys, memo);
      const trace: PrerequisiteTrace = { flag: p.key, variation: p.variation, holds: served?.variation === p.variation };
      if (served) {
        trace.served = String(served.variation);
        trace.reason = served.reason;
      }
      traces.push(trace);
      if (!trace.holds) {
        failed = p.key;
        break;
      }
    }
    if (failed !== null) {
      const last = traces[traces.length - 1];
      const why =
        last.served === undefined
          ? `prerequisite ${failed} does not exist in this environment`
          : `prerequisite ${failed} serves ${last.served} (reason ${last.reason}), not ${last.variation}`;
      return done(
        { value: flag.valueOff, reason: 'prerequisite_failed', variation: 'off', prerequisiteKey: failed },
        { step: 'prerequisites', outcome: `${why}: serves valueOff`, prerequisites: traces },
      );
    }
    steps.push({ step: 'prerequisites', outcome: 'every prerequisite serves its variation', prerequisites: traces });
  }

  // The result itself comes from the evaluator; the steps say why, reading the same compiled rules.
  const result = evaluateFlag(flag, ctx, false, killedKeys);
  const userId = bucketingId(ctx);
  const b = userId === null ? -1 : bucketOf(flag, userId);
  for (let r = 0; r < flag.rules.length; r++) {
    const rule = flag.rules[r];
    const step: EvaluationStep = {
      step: 'rule',
      ruleId: rule.id,
      outcome: '',
      conditions: traceConditions(rule, snapshotFlag.rules[r].conditions ?? [], ctx, compiled.segments, environment.segments),
    };
    const served = rule.serveOn
      ? flag.variants === null
        ? 'valueOn'
        : 'a variant'
      : rule.variant
        ? `variant ${rule.variant.name}`
        : 'valueOff';
    if (!ruleMatches(rule, ctx)) {
      step.outcome = 'does not match: not every condition holds';
    } else if (!rule.hasRollout) {
      step.variant = rule.serveOn ? variantTrace(flag, result) : undefined;
      step.outcome = `matches: serves ${served}${variantWords(step.variant)}`;
      return done(result, step);
    } else if (userId === null) {
      step.outcome = `matches, but its rolloutPct ${rule.rolloutPct} needs a userId: does not apply`;
    } else if (b < rule.rolloutPct) {
      step.variant = rule.serveOn ? variantTrace(flag, result) : undefined;
      step.outcome = `matches and bucket ${b} < rolloutPct ${rule.rolloutPct}: serves ${served}${variantWords(step.variant)}`;
      return done(result, step);
    } else {
      step.outcome = `matches, but bucket ${b} is not below rolloutPct ${rule.rolloutPct}: does not apply`;
    }
    if (step.variant === undefined) delete step.variant;
    steps.push(step);
  }

  const pct = flag.rolloutPct;
  const on = flag.variants === null ? 'valueOn' : 'a variant';
  const step: EvaluationStep = { step: 'rollout', outcome: '' };
  if (result.variation !== 'off') {
    const variant = variantTrace(flag, result);
    if (variant) step.variant = variant;
    const words = variantWords(variant);
    step.outcome = pct >= 100 ? `rolloutPct ${pct}: serves ${on}${words}` : `bucket ${b} < rolloutPct ${pct}: serves ${on}${words}`;
  } else if (!(pct > 0)) step.outcome = `rolloutPct ${pct}: serves valueOff`;
  else if (userId === null) step.outcome = `rolloutPct ${pct} needs a userId to bucket: serves valueOff`;
  else step.outcome = `bucket ${b} is not below rolloutPct ${pct}: serves valueOff`;
  return done(result, step);
}
