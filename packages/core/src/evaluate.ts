/**
 * Evaluation: a snapshot's flags compiled once, then evaluated for a context in this order: killed,
 * archived, disabled, prerequisites, the rules top-down, the rollout. Compiling does the parsing and hashing
 * that every evaluation would otherwise repeat; evaluating only reads fields and allocates only the result.
 */
import { CompiledCondition, CompiledSegment, conditionHolds, readAttribute, segmentConditionHolds } from './conditions.js';
import { frozenCopy } from './json.js';
import type { EvaluationContext, EvaluationResult, JsonValue, Rule, SnapshotFlag, SnapshotSegment, Variant } from './model.js';
import { murmur3Absorb, murmur3Resume, resumeBucket } from './murmur3.js';

/** One variant; weights are kept as whole hundredths so that cumulative sums are exact. */
export class CompiledVariant {
  readonly name: string;
  readonly value: JsonValue;
  /** The variant is served for variant buckets (in hundredths) below this cumulative weight. */
  readonly upTo: number;
  readonly weighted: boolean;

  constructor(variant: Variant, upTo: number) {
    this.name = String(variant.name);
    this.value = frozenCopy(variant.value);
    this.upTo = upTo;
    this.weighted = variant.weight > 0;
  }
}

/** Weight in whole hundredths (weights have at most two decimals). */
function hundredths(weight: unknown): number {
  return typeof weight === 'number' && weight > 0 ? Math.round(weight * 100) : 0;
}

function compileVariants(variants: readonly Variant[] | undefined): readonly CompiledVariant[] | null {
  if (!Array.isArray(variants) || variants.length === 0) return null;
  let upTo = 0;
  return variants.map((v) => {
    upTo += hundredths(v.weight);
    return new CompiledVariant(v, upTo);
  });
}

export class CompiledRule {
  readonly id: string;
  readonly serveOn: boolean;
  /** The variant a rule serving a variant by name serves; null for `on` and `off`. */
  readonly variant: CompiledVariant | null;
  readonly hasRollout: boolean;
  /** Meaningful only when hasRollout. */
  readonly rolloutPct: number;
  readonly conditions: readonly CompiledCondition[];

  constructor(rule: Rule, variants: readonly CompiledVariant[] | null, segments: ReadonlyMap<string, CompiledSegment> | undefined) {
    this.id = rule.id;
    this.serveOn = rule.serve === 'on';
    // A name that is no variant (refused at write time) serves valueOff: fail closed.
    this.variant = this.serveOn || rule.serve === 'off' ? null : (variants?.find((v) => v.name === rule.serve) ?? null);
    this.hasRollout = typeof rule.rolloutPct === 'number';
    this.rolloutPct = this.hasRollout ? (rule.rolloutPct as number) : 0;
    this.conditions = (rule.conditions ?? []).map((c) => new CompiledCondition(c, segments));
  }
}

/** A prerequisite, linked to the compiled flag it names once every flag of the snapshot is compiled. */
export class CompiledPrerequisite {
  readonly key: string;
  readonly variation: string;
  /** Null when the snapshot has no such flag, or when following it would close a cycle: it then fails. */
  flag: CompiledFlag | null = null;

  constructor(key: string, variation: string) {
    this.key = key;
    this.variation = variation;
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
  /** Null when the config has no variants: `on` serves valueOn. */
  readonly variants: readonly CompiledVariant[] | null;
  /** What `on` serves without a userId: the first variant with a weight above 0. */
  readonly firstWeighted: CompiledVariant | null;
  /** Null when the config has none. */
  readonly prerequisites: readonly CompiledPrerequisite[] | null;
  /** Neither variants nor prerequisites nor a rule naming a variant: evaluated by evaluatePlain. */
  readonly plain: boolean;
  /** MurmurHash3 state after `"<key>/"`, kept as plain number fields so the bucket reads no nested object. */
  readonly prefixH: number;
  readonly prefixK: number;
  readonly prefixN: number;
  readonly prefixLen: number;
  /** MurmurHash3 state after `"<key>/variant/"`, for the variant bucket. */
  readonly variantH: number;
  readonly variantK: number;
  readonly variantN: number;
  readonly variantLen: number;

  constructor(key: string, flag: SnapshotFlag, segments?: ReadonlyMap<string, CompiledSegment>) {
    this.key = key;
    this.killed = flag.killed === true;
    this.archived = flag.archived === true;
    this.enabled = flag.enabled === true;
    this.rolloutPct = flag.rolloutPct;
    this.valueOn = frozenCopy(flag.valueOn);
    this.valueOff = frozenCopy(flag.valueOff);
    this.defaultValue = frozenCopy(flag.defaultValue);
    this.variants = compileVariants(flag.variants);
    this.firstWeighted = this.variants?.find((v) => v.weighted) ?? null;
    this.rules = (flag.rules ?? []).map((r) => new CompiledRule(r, this.variants, segments));
    const prerequisites = Array.isArray(flag.prerequisites) ? flag.prerequisites : [];
    this.prerequisites = prerequisites.length > 0 ? prerequisites.map((p) => new CompiledPrerequisite(p.flag, p.variation)) : null;
    this.plain = this.variants === null && this.prerequisites === null && this.rules.every((r) => r.variant === null);
    const prefix = murmur3Absorb(key + '/');
    this.prefixH = prefix.h;
    this.prefixK = prefix.k;
    this.prefixN = prefix.n;
    this.prefixLen = prefix.len;
    const variant = murmur3Absorb(key + '/variant/');
    this.variantH = variant.h;
    this.variantK = variant.k;
    this.variantN = variant.n;
    this.variantLen = variant.len;
  }
}

/** A rule matches when all its conditions hold; a rule without conditions always matches. */
export function ruleMatches(rule: CompiledRule, context: EvaluationContext): boolean {
  const conditions = rule.conditions;
  for (let i = 0; i < conditions.length; i++) {
    const c = conditions[i];
    // Attribute conditions take the same path as before segments existed: the hot path of most rules.
    if (c.isSegment ? !segmentConditionHolds(c, context) : !conditionHolds(c, readAttribute(context, c))) return false;
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

/** The variant bucket in whole hundredths: murmur3("<flagKey>/variant/<userId>") mod 10000. */
export function variantHundredths(flag: CompiledFlag, userId: string): number {
  return murmur3Resume(flag.variantH, flag.variantK, flag.variantN, flag.variantLen, userId) % 10000;
}

/** The variant a bucket (in hundredths) falls in: the first whose cumulative weight exceeds it. */
export function variantAt(variants: readonly CompiledVariant[], h: number): CompiledVariant | null {
  for (let i = 0; i < variants.length; i++) if (h < variants[i].upTo) return variants[i];
  return null;
}

type ServeReason = 'rule_match' | 'rollout' | 'default';

/**
 * The result where the config serves valueOn: with variants, the variant the variant bucket picks (the first
 * variant with weight without a userId). `ruleId` and `bucket` are added by the caller's step.
 */
function serveOn(flag: CompiledFlag, reason: ServeReason, userId: string | null): EvaluationResult {
  const variants = flag.variants;
  if (variants === null) return { value: flag.valueOn, reason, variation: 'on' };
  if (userId === null) {
    const first = flag.firstWeighted;
    return first === null ? { value: flag.valueOn, reason, variation: 'on' } : { value: first.value, reason, variation: first.name };
  }
  const h = variantHundredths(flag, userId);
  const variant = variantAt(variants, h) ?? flag.firstWeighted;
  if (variant === null) return { value: flag.valueOn, reason, variation: 'on' };
  return { value: variant.value, reason, variation: variant.name, variantBucket: h / 100 };
}

/** What an applying rule serves: valueOff, its named variant, or valueOn (a variant by the variant bucket). */
function serveRule(flag: CompiledFlag, rule: CompiledRule, userId: string | null, bucket: number): EvaluationResult {
  let result: EvaluationResult;
  if (rule.serveOn) result = serveOn(flag, 'rule_match', userId);
  else if (rule.variant !== null) result = { value: rule.variant.value, reason: 'rule_match', variation: rule.variant.name };
  else result = { value: flag.valueOff, reason: 'rule_match', variation: 'off' };
  result.ruleId = rule.id;
  if (bucket >= 0) result.bucket = bucket;
  return result;
}

/** Per evaluation, the variation each prerequisite flag served, so a flag required twice is evaluated once. */
export type PrerequisiteMemo = Map<CompiledFlag, string | undefined>;

/**
 * The key of the first prerequisite that does not serve its variation for this context, or null when all do.
 * A prerequisite is evaluated in the same environment, with the same kill overlay, for the same context.
 */
export function failedPrerequisite(
  flag: CompiledFlag,
  context: EvaluationContext,
  killedKeys: ReadonlySet<string> | undefined,
  memo: PrerequisiteMemo,
): string | null {
  const prerequisites = flag.prerequisites!;
  for (let i = 0; i < prerequisites.length; i++) {
    const p = prerequisites[i];
    const required = p.flag;
    if (required === null) return p.key;
    let variation: string | undefined;
    if (memo.has(required)) variation = memo.get(required);
    else {
      const killed = killedKeys === undefined ? required.killed : killedKeys.has(required.key);
      variation = evaluateFlag(required, context, killed, killedKeys, memo).variation;
      memo.set(required, variation);
    }
    if (variation !== p.variation) return p.key;
  }
  return null;
}

/**
 * A flag without variants or prerequisites (most flags): killed, archived, disabled, rules, rollout, serving
 * valueOn or valueOff. Kept apart from evaluateFlag so that such flags run exactly the code they ran before
 * variants and prerequisites existed.
 */
export function evaluatePlain(flag: CompiledFlag, context: EvaluationContext, killed: boolean): EvaluationResult {
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

/**
 * One flag's result, in order: killed, archived, disabled, prerequisites, rules, rollout. Allocates only the
 * result (and, for a flag with prerequisites, the memo of one evaluation). `bucket` is reported by the step
 * that used it: a rule with rolloutPct, or a rollout strictly between 0 and 100.
 */
export function evaluateFlag(
  flag: CompiledFlag,
  context: EvaluationContext,
  killed: boolean,
  killedKeys?: ReadonlySet<string>,
  memo?: PrerequisiteMemo,
): EvaluationResult {
  if (flag.plain) return evaluatePlain(flag, context, killed);
  if (killed) return { value: flag.valueOff, reason: 'killed', variation: 'off' };
  if (flag.archived) return { value: flag.defaultValue, reason: 'archived', variation: 'default' };
  if (!flag.enabled) return { value: flag.valueOff, reason: 'flag_disabled', variation: 'off' };
  if (flag.prerequisites !== null) {
    const failed = failedPrerequisite(flag, context, killedKeys, memo ?? new Map());
    if (failed !== null) return { value: flag.valueOff, reason: 'prerequisite_failed', variation: 'off', prerequisiteKey: failed };
  }

  const userId = bucketingId(context);
  let b = -1;
  const rules = flag.rules;
  for (let r = 0; r < rules.length; r++) {
    const rule = rules[r];
    if (!ruleMatches(rule, context)) continue;
    if (!rule.hasRollout) return serveRule(flag, rule, userId, -1);
    if (userId === null) continue;
    if (b < 0) b = bucketOf(flag, userId);
    if (b < rule.rolloutPct) return serveRule(flag, rule, userId, b);
  }

  const pct = flag.rolloutPct;
  if (pct >= 100) return serveOn(flag, 'default', userId);
  if (!(pct > 0)) return { value: flag.valueOff, reason: 'default', variation: 'off' };
  if (userId === null) return { value: flag.valueOff, reason: 'rollout', variation: 'off' };
  if (b < 0) b = bucketOf(flag, userId);
  if (b >= pct) return { value: flag.valueOff, reason: 'rollout', variation: 'off', bucket: b };
  const result = serveOn(flag, 'rollout', userId);
  result.bucket = b;
  return result;
}

const EMPTY_CONTEXT: EvaluationContext = Object.freeze({});

/**
 * Links each prerequisite to its compiled flag. A prerequisite that would close a cycle (refused at write
 * time, but a snapshot is input like any other) stays unlinked and fails, so evaluation always terminates.
 * `linked` is the keys of the flags with prerequisites, in snapshot order: which link of a cycle stays
 * unlinked depends on the order, so it is the order of a whole snapshot, however the environment was made.
 */
function linkPrerequisites(flags: ReadonlyMap<string, CompiledFlag>, linked: readonly string[]): void {
  const state = new Map<CompiledFlag, 1 | 2>(); // 1: on the current path, 2: done
  const visit = (flag: CompiledFlag) => {
    state.set(flag, 1);
    for (const p of flag.prerequisites ?? []) {
      const target = flags.get(p.key);
      if (target === undefined || state.get(target) === 1) continue;
      p.flag = target;
      if (!state.has(target)) visit(target);
    }
    state.set(flag, 2);
  };
  for (const key of linked) {
    const flag = flags.get(key)!;
    if (!state.has(flag)) visit(flag);
  }
}

/** The keys of the flags with prerequisites, in the order of `keys`. */
function keysWithPrerequisites(flags: ReadonlyMap<string, CompiledFlag>, keys: readonly string[]): readonly string[] {
  const linked: string[] = [];
  for (const key of keys) if (flags.get(key)!.prerequisites !== null) linked.push(key);
  return linked;
}

/**
 * What changed in a snapshot since the one an environment was compiled from (CompiledEnvironment.withChanges).
 */
export interface FlagChanges {
  /** Object.keys of the new flags, in that order; the previous environment's own `keys` when they are the same. */
  readonly keys: readonly string[];
  /** The keys whose entries changed, or are new; every other entry is taken to be the one compiled before. */
  readonly changed: ReadonlySet<string>;
}

/** An environment's flags compiled once per snapshot; evaluating is then read-only and allocates only the result. */
export class CompiledEnvironment {
  private readonly flags: ReadonlyMap<string, CompiledFlag>;
  /** The keys of the flags with prerequisites, in snapshot order. */
  private readonly linked: readonly string[];
  /** Every flag key of the snapshot, in snapshot order. */
  readonly keys: readonly string[];
  /** The project's segments, compiled. */
  readonly segments: ReadonlyMap<string, CompiledSegment>;

  /**
   * `previous` (internal: see withChanges) lends its segments and the compiled flags of unchanged entries;
   * `segments` is then not read.
   */
  constructor(
    flags: Readonly<Record<string, SnapshotFlag>>,
    segments?: Readonly<Record<string, SnapshotSegment>>,
    previous?: { environment: CompiledEnvironment; changes: FlagChanges },
  ) {
    if (previous === undefined) {
      const compiledSegments = new Map<string, CompiledSegment>();
      if (segments != null) for (const key of Object.keys(segments)) compiledSegments.set(key, new CompiledSegment(segments[key]));
      this.segments = compiledSegments;
      const compiled = new Map<string, CompiledFlag>();
      for (const key of Object.keys(flags)) compiled.set(key, new CompiledFlag(key, flags[key], compiledSegments));
      this.keys = Object.freeze([...compiled.keys()]);
      this.linked = keysWithPrerequisites(compiled, this.keys);
      linkPrerequisites(compiled, this.linked);
      this.flags = compiled;
      return;
    }
    const { environment: before, changes } = previous;
    const { keys, changed } = changes;
    this.segments = before.segments;
    const sameKeys = keys === before.keys;
    let compiled: Map<string, CompiledFlag>;
    if (sameKeys) {
      compiled = new Map(before.flags);
      for (const key of changed) compiled.set(key, new CompiledFlag(key, flags[key], this.segments));
    } else {
      compiled = new Map();
      for (const key of keys) {
        const old = before.flags.get(key);
        compiled.set(key, old === undefined || changed.has(key) ? new CompiledFlag(key, flags[key], this.segments) : old);
      }
    }
    this.keys = sameKeys || Object.isFrozen(keys) ? keys : Object.freeze([...keys]);
    let linkedChanged = !sameKeys;
    for (const key of changed) linkedChanged ||= compiled.get(key)!.prerequisites !== null || before.flags.get(key)?.prerequisites != null;
    this.linked = linkedChanged ? keysWithPrerequisites(compiled, this.keys) : before.linked;
    // A flag with prerequisites is compiled anew: linking writes into it, and the old one may still be evaluated.
    for (const key of this.linked)
      if (compiled.get(key) === before.flags.get(key)) compiled.set(key, new CompiledFlag(key, flags[key], this.segments));
    linkPrerequisites(compiled, this.linked);
    this.flags = compiled;
  }

  /**
   * The environment of a new snapshot with the same segments, given what changed since the one this was
   * compiled from: only the changed entries are compiled (and the flags with prerequisites, which are few),
   * so a change to one flag costs that flag, not the environment. With other segments, compile anew.
   */
  withChanges(flags: Readonly<Record<string, SnapshotFlag>>, changes: FlagChanges): CompiledEnvironment {
    return new CompiledEnvironment(flags, undefined, { environment: this, changes });
  }

  /**
   * withChanges where the changes are found by reference: entries are taken as immutable, and an entry that is
   * the same object in `flags` as in `previousFlags` (the entries this environment was compiled from) is unchanged.
   */
  withFlags(flags: Readonly<Record<string, SnapshotFlag>>, previousFlags: Readonly<Record<string, SnapshotFlag>>): CompiledEnvironment {
    const keys = Object.keys(flags);
    const changed = new Set<string>();
    for (const key of keys) if (!Object.hasOwn(previousFlags, key) || previousFlags[key] !== flags[key]) changed.add(key);
    const same = keys.length === this.keys.length && keys.every((key, i) => key === this.keys[i]);
    return this.withChanges(flags, { keys: same ? this.keys : keys, changed });
  }

  has(flagKey: string): boolean {
    return this.flags.has(flagKey);
  }

  /** The compiled flag, for explanations; undefined when the snapshot has none of that key. */
  flag(flagKey: string): CompiledFlag | undefined {
    return this.flags.get(flagKey);
  }

  /**
   * Evaluates one flag. `killedKeys` is the kill overlay the server swaps independently of the
   * snapshot: when given it alone decides "killed" (of the flag and of its prerequisites); when absent, the
   * snapshot's own `killed` fields do (SDKs).
   */
  evaluate(flagKey: string, context: EvaluationContext, killedKeys?: ReadonlySet<string>): EvaluationResult {
    const flag = this.flags.get(flagKey);
    if (flag === undefined) return { value: null, reason: 'flag_not_found' };
    const killed = killedKeys === undefined ? flag.killed : killedKeys.has(flagKey);
    if (flag.plain) return evaluatePlain(flag, context ?? EMPTY_CONTEXT, killed);
    return evaluateFlag(flag, context ?? EMPTY_CONTEXT, killed, killedKeys);
  }
}

/** Compiles a snapshot's flags (and its segments) for repeated evaluation. Later changes to the input have no effect. */
export function compileEnvironment(flags: Record<string, SnapshotFlag>, segments?: Record<string, SnapshotSegment>): CompiledEnvironment {
  return new CompiledEnvironment(flags, segments);
}
