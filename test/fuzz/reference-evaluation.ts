/**
 * A second evaluator, written from docs/evaluation.md alone and sharing no code with @flagops/core (types
 * aside): an oracle for the properties, so that a rule misread in the core is not repeated in what checks it.
 * Plain and slow on purpose: one step of the docs' table after another, buckets from murmurhash-js, semantic
 * versions by semver.org's own regular expression and BigInt.
 */
import type { EvaluationContext, EvaluationResult, JsonValue, SnapshotFlag, SnapshotSegment } from '@flagops/core';
import { referenceBucket, referenceVariantBucket } from '../evaluation/support.js';

type Flags = Record<string, SnapshotFlag>;
type Segments = Record<string, SnapshotSegment>;

/** The regular expression semver.org gives for a valid version (JavaScript's `$` matches only at the end). */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** Precedence of two versions (semver.org item 11): -1, 0 or 1; null when either is not a valid version. */
export function semverCompare(a: unknown, b: unknown): number | null {
  const x = typeof a === 'string' ? SEMVER.exec(a) : null;
  const y = typeof b === 'string' ? SEMVER.exec(b) : null;
  if (x === null || y === null) return null;
  for (let i = 1; i <= 3; i++) {
    const d = BigInt(x[i]) - BigInt(y[i]);
    if (d !== 0n) return d < 0n ? -1 : 1;
  }
  if (x[4] === undefined || y[4] === undefined) return x[4] === y[4] ? 0 : x[4] === undefined ? 1 : -1;
  const p = x[4].split('.');
  const q = y[4].split('.');
  for (let i = 0; i < Math.min(p.length, q.length); i++) {
    const pn = /^\d+$/.test(p[i]);
    const qn = /^\d+$/.test(q[i]);
    if (pn && qn) {
      const d = BigInt(p[i]) - BigInt(q[i]);
      if (d !== 0n) return d < 0n ? -1 : 1;
    } else if (pn !== qn) return pn ? -1 : 1;
    else if (p[i] !== q[i]) return p[i] < q[i] ? -1 : 1;
  }
  return p.length === q.length ? 0 : p.length < q.length ? -1 : 1;
}

const isScalar = (v: unknown) =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
const own = (o: unknown, key: string) => o !== null && typeof o === 'object' && Object.hasOwn(o, key);

/** The attribute a condition reads: the context's own attributes; `userId` reads context.userId first. */
function attribute(ctx: EvaluationContext, name: string): unknown {
  if (name === 'userId' && ctx.userId !== undefined) return ctx.userId;
  return own(ctx.attributes, name) ? (ctx.attributes as Record<string, unknown>)[name] : undefined;
}

function attributeHolds(op: unknown, a: unknown, value: unknown): boolean {
  if (a === undefined) return false; // a missing attribute makes every condition false
  switch (op) {
    case 'eq':
      return isScalar(value) && isScalar(a) && a === value;
    case 'neq':
      return isScalar(value) && isScalar(a) && a !== value;
    case 'in':
      return Array.isArray(value) && isScalar(a) && value.some((member) => isScalar(member) && member === a);
    case 'not_in':
      return Array.isArray(value) && isScalar(a) && !value.some((member) => isScalar(member) && member === a);
    case 'contains':
      if (!isScalar(value)) return false;
      if (typeof a === 'string') return typeof value === 'string' && a.includes(value);
      return Array.isArray(a) && a.some((member) => member === value);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (typeof a !== 'number' || typeof value !== 'number' || !Number.isFinite(a) || !Number.isFinite(value)) return false;
      return op === 'gt' ? a > value : op === 'gte' ? a >= value : op === 'lt' ? a < value : a <= value;
    }
    case 'semver_eq':
    case 'semver_gt':
    case 'semver_lt': {
      const c = semverCompare(a, value);
      return c !== null && (op === 'semver_eq' ? c === 0 : op === 'semver_gt' ? c > 0 : c < 0);
    }
    default:
      return false; // an unknown operator matches nothing
  }
}

type AnyCondition = { attribute?: unknown; op?: unknown; value?: unknown };

/** In a segment: the user id listed, or conditions that all hold (a segment's own segment conditions never do). */
function inSegment(segment: SnapshotSegment, ctx: EvaluationContext): boolean {
  const id =
    ctx.userId !== undefined ? ctx.userId : own(ctx.attributes, 'userId') ? (ctx.attributes as Record<string, unknown>).userId : undefined;
  if (typeof id === 'string' && (segment.userIds ?? []).includes(id)) return true;
  const conditions = (segment.conditions ?? []) as AnyCondition[];
  return conditions.length > 0 && conditions.every((c) => attributeHolds(c.op, attribute(ctx, String(c.attribute)), c.value));
}

function conditionHolds(c: AnyCondition, ctx: EvaluationContext, segments: Segments): boolean {
  if (c.op === 'in_segment' || c.op === 'not_in_segment') {
    if (typeof c.value !== 'string' || !own(segments, c.value)) return false; // an unknown segment: neither holds
    return inSegment(segments[c.value], ctx) === (c.op === 'in_segment');
  }
  return attributeHolds(c.op, attribute(ctx, String(c.attribute)), c.value);
}

/** What serves where the config serves valueOn: a variant by the variant bucket when it has variants. */
function serveOn(key: string, flag: SnapshotFlag, userId: string | null, reason: EvaluationResult['reason']): EvaluationResult {
  const variants = flag.variants ?? [];
  const firstWeighted = variants.find((v) => v.weight > 0);
  if (variants.length === 0) return { value: flag.valueOn, reason, variation: 'on' };
  if (userId === null)
    return firstWeighted
      ? { value: firstWeighted.value, reason, variation: firstWeighted.name }
      : { value: flag.valueOn, reason, variation: 'on' };
  const variantBucket = referenceVariantBucket(key, userId);
  let upTo = 0;
  let picked = variants.find((v) => {
    upTo += Math.round(v.weight * 100);
    return variantBucket * 100 < upTo;
  });
  picked ??= firstWeighted;
  if (picked === undefined) return { value: flag.valueOn, reason, variation: 'on' };
  return { value: picked.value, reason, variation: picked.name, variantBucket };
}

function evaluateFlag(
  key: string,
  flags: Flags,
  segments: Segments,
  ctx: EvaluationContext,
  killedKeys: ReadonlySet<string> | undefined,
  path: readonly string[],
): EvaluationResult {
  const flag = flags[key];
  const off = (reason: EvaluationResult['reason']): EvaluationResult => ({ value: flag.valueOff, reason, variation: 'off' });
  if (killedKeys ? killedKeys.has(key) : flag.killed === true) return off('killed');
  if (flag.archived === true)
    return { value: flag.defaultValue === undefined ? null : flag.defaultValue, reason: 'archived', variation: 'default' };
  if (flag.enabled !== true) return off('flag_disabled');
  for (const p of flag.prerequisites ?? []) {
    const met =
      own(flags, p.flag) &&
      !path.includes(p.flag) &&
      evaluateFlag(p.flag, flags, segments, ctx, killedKeys, [...path, p.flag]).variation === p.variation;
    if (!met) return { ...off('prerequisite_failed'), prerequisiteKey: p.flag };
  }
  const userId = typeof ctx.userId === 'string' && ctx.userId !== '' ? ctx.userId : null;
  for (const rule of flag.rules ?? []) {
    if (!(rule.conditions ?? []).every((c) => conditionHolds(c as AnyCondition, ctx, segments))) continue;
    let bucket: number | undefined;
    if (typeof rule.rolloutPct === 'number') {
      if (userId === null) continue; // never applies without a userId
      bucket = referenceBucket(key, userId);
      if (!(bucket < rule.rolloutPct)) continue;
    }
    const variant = flag.variants?.find((v) => v.name === rule.serve);
    const served =
      rule.serve === 'on'
        ? serveOn(key, flag, userId, 'rule_match')
        : variant !== undefined && rule.serve !== 'off'
          ? { value: variant.value, reason: 'rule_match' as const, variation: variant.name }
          : off('rule_match');
    return { ...served, ruleId: rule.id, ...(bucket === undefined ? {} : { bucket }) };
  }
  const pct = flag.rolloutPct;
  if (pct >= 100) return serveOn(key, flag, userId, 'default');
  if (!(pct > 0)) return off('default');
  if (userId === null) return off('rollout');
  const bucket = referenceBucket(key, userId);
  return bucket < pct ? { ...serveOn(key, flag, userId, 'rollout'), bucket } : { ...off('rollout'), bucket };
}

/** The result docs/evaluation.md gives for `key` in an environment of `flags` and `segments`. */
export function referenceEvaluate(
  flags: Flags,
  key: string,
  ctx: EvaluationContext,
  options: { segments?: Segments; killedKeys?: ReadonlySet<string> } = {},
): EvaluationResult {
  if (!own(flags, key)) return { value: null as JsonValue, reason: 'flag_not_found' };
  return evaluateFlag(key, flags, options.segments ?? {}, ctx ?? {}, options.killedKeys, [key]);
}
