/**
 * Evaluation: a snapshot's flags compiled once, then evaluated for a context in this order: killed,
 * archived, disabled, the rules top-down, the rollout. Compiling does the parsing and hashing that every
 * evaluation would otherwise repeat; evaluating only reads fields and allocates only the result.
 */
import { CompiledCondition, conditionHolds, readAttribute } from './conditions.js';
import { frozenCopy } from './json.js';
import type { EvaluationContext, EvaluationResult, Rule, SnapshotFlag } from './model.js';
import { murmur3Absorb, resumeBucket } from './murmur3.js';

export class CompiledRule {
  readonly id: string;
  readonly serveOn: boolean;
  readonly hasRollout: boolean;
  /** Meaningful only when hasRollout. */
  readonly rolloutPct: number;
  readonly conditions: readonly CompiledCondition[];

  constructor(rule: Rule) {
    this.id = rule.id;
    this.serveOn = rule.serve === 'on';
    this.hasRollout = typeof rule.rolloutPct === 'number';
    this.rolloutPct = this.hasRollout ? (rule.rolloutPct as number) : 0;
    this.conditions = (rule.conditions ?? []).map((c) => new CompiledCondition(c));
  }
}

/** One flag of a snapshot, prepared once so that evaluation only reads fields. */
export class CompiledFlag {
  readonly key: string;
  readonly killed: boolean;
  readonly archived: boolean;
  readonly enabled: boolean;
  readonly rolloutPct: number;
  readonly valueOn: SnapshotFlag['valueOn'];
  readonly valueOff: SnapshotFlag['valueOff'];
  /** Archived flags serve it; null when the flag has none. */
  readonly defaultValue: SnapshotFlag['defaultValue'];
  readonly rules: readonly CompiledRule[];
  /** MurmurHash3 state after `"<key>/"`, kept as plain number fields so the bucket reads no nested object. */
  readonly prefixH: number;
  readonly prefixK: number;
  readonly prefixN: number;
  readonly prefixLen: number;

  constructor(key: string, flag: SnapshotFlag) {
    this.key = key;
    this.killed = flag.killed === true;
    this.archived = flag.archived === true;
    this.enabled = flag.enabled === true;
    this.rolloutPct = flag.rolloutPct;
    this.valueOn = frozenCopy(flag.valueOn);
    this.valueOff = frozenCopy(flag.valueOff);
    this.defaultValue = frozenCopy(flag.defaultValue);
    this.rules = (flag.rules ?? []).map((r) => new CompiledRule(r));
    const prefix = murmur3Absorb(key + '/');
    this.prefixH = prefix.h;
    this.prefixK = prefix.k;
    this.prefixN = prefix.n;
    this.prefixLen = prefix.len;
  }
}

/** A rule matches when all its conditions hold; a rule without conditions always matches. */
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
 * One flag's result, in order: killed, archived, disabled, rules, rollout. Allocates only the result.
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

const EMPTY_CONTEXT: EvaluationContext = Object.freeze({});

/** An environment's flags compiled once per snapshot; evaluating is then read-only and allocates only the result. */
export class CompiledEnvironment {
  private readonly flags: ReadonlyMap<string, CompiledFlag>;
  /** Every flag key of the snapshot, in snapshot order. */
  readonly keys: readonly string[];

  constructor(flags: Record<string, SnapshotFlag>) {
    const compiled = new Map<string, CompiledFlag>();
    for (const key of Object.keys(flags)) compiled.set(key, new CompiledFlag(key, flags[key]));
    this.flags = compiled;
    this.keys = Object.freeze([...compiled.keys()]);
  }

  has(flagKey: string): boolean {
    return this.flags.has(flagKey);
  }

  /**
   * Evaluates one flag. `killedKeys` is the kill overlay the server swaps independently of the
   * snapshot: when given it alone decides "killed"; when absent, the snapshot's own `killed` field does (SDKs).
   */
  evaluate(flagKey: string, context: EvaluationContext, killedKeys?: ReadonlySet<string>): EvaluationResult {
    const flag = this.flags.get(flagKey);
    if (flag === undefined) return { value: null, reason: 'flag_not_found' };
    const killed = killedKeys === undefined ? flag.killed : killedKeys.has(flagKey);
    return evaluateFlag(flag, context ?? EMPTY_CONTEXT, killed);
  }
}

/** Compiles a snapshot's flags for repeated evaluation. Later changes to the input have no effect. */
export function compileEnvironment(flags: Record<string, SnapshotFlag>): CompiledEnvironment {
  return new CompiledEnvironment(flags);
}
