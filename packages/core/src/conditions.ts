import { isJsonScalar } from './json.js';
import type { AttributeCondition, Condition, EvaluationContext, SnapshotSegment } from './model.js';
import { compareSemver, parseSemver, type Semver } from './semver.js';

/**
 * Conditions are compiled once per snapshot into one class with fixed fields and a numeric opcode, so
 * the hot path is a monomorphic switch rather than a call through per-operator closures. Opcodes are
 * module constants, which the JIT folds.
 */
const NEVER = 0;
const EQ = 1;
const NEQ = 2;
const IN_LIST = 3;
const IN_SET = 4;
const NOT_IN_LIST = 5;
const NOT_IN_SET = 6;
const CONTAINS = 7;
const GT = 8;
const GTE = 9;
const LT = 10;
const LTE = 11;
const SEMVER_EQ = 12;
const SEMVER_GT = 13;
const SEMVER_LT = 14;
const IN_SEGMENT = 15;
const NOT_IN_SEGMENT = 16;

/** Above this many members a linear scan loses to a Set lookup. */
const SET_THRESHOLD = 8;

const NO_MEMBERS: readonly unknown[] = [];

export class CompiledCondition {
  readonly attribute: string;
  /** `userId` also resolves to context.userId. */
  readonly readsUserId: boolean;
  /** The name is also a property every object inherits ("constructor", "__proto__"): read own properties only. */
  readonly ownOnly: boolean;
  readonly op: number;
  /** eq/neq/contains operand: always a JSON scalar, never NaN. */
  readonly scalar: unknown;
  /** gt/gte/lt/lte operand: always finite. */
  readonly num: number;
  /** in/not_in members, scalars only, so a hit implies the attribute is a scalar. */
  readonly list: readonly unknown[];
  readonly set: ReadonlySet<unknown> | null;
  readonly semver: Semver | null;
  /** in_segment/not_in_segment: the segment, or null when the snapshot has no segment of that key (never holds). */
  readonly segment: CompiledSegment | null;
  /** Whether this is a segment condition, which reads the whole context rather than one attribute. */
  readonly isSegment: boolean;

  /** `segments` resolves segment conditions; without it (inside a segment) they never hold. */
  constructor(source: Condition, segments?: ReadonlyMap<string, CompiledSegment>) {
    this.attribute = 'attribute' in source ? String(source.attribute) : '';
    this.readsUserId = this.attribute === 'userId';
    this.ownOnly = this.attribute in Object.prototype;
    const value: unknown = source.value;
    let op = NEVER; // fail closed: an unknown operator or an operand of the wrong type matches nothing
    let scalar: unknown = null;
    let num = 0;
    let list = NO_MEMBERS;
    let semver: Semver | null = null;
    let segment: CompiledSegment | null = null;
    switch (source.op) {
      case 'in_segment':
      case 'not_in_segment':
        segment = (typeof source.value === 'string' && segments?.get(source.value)) || null;
        // An unknown segment fails closed, for both operators, as a missing attribute does.
        if (segment !== null) op = source.op === 'in_segment' ? IN_SEGMENT : NOT_IN_SEGMENT;
        break;
      case 'eq':
      case 'neq':
      case 'contains':
        if (isJsonScalar(value)) {
          op = source.op === 'eq' ? EQ : source.op === 'neq' ? NEQ : CONTAINS;
          scalar = value;
        }
        break;
      case 'in':
      case 'not_in':
        if (Array.isArray(value)) {
          list = value.filter(isJsonScalar);
          const large = list.length > SET_THRESHOLD;
          op = source.op === 'in' ? (large ? IN_SET : IN_LIST) : large ? NOT_IN_SET : NOT_IN_LIST;
        }
        break;
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        if (typeof value === 'number' && Number.isFinite(value)) {
          op = { gt: GT, gte: GTE, lt: LT, lte: LTE }[source.op];
          num = value;
        }
        break;
      case 'semver_eq':
      case 'semver_gt':
      case 'semver_lt':
        semver = parseSemver(value);
        if (semver !== null) op = { semver_eq: SEMVER_EQ, semver_gt: SEMVER_GT, semver_lt: SEMVER_LT }[source.op];
        break;
    }
    this.op = op;
    this.scalar = scalar;
    this.num = num;
    this.list = list;
    this.set = op === IN_SET || op === NOT_IN_SET ? new Set(list) : null;
    this.semver = semver;
    this.segment = segment;
    this.isSegment = source.op === 'in_segment' || source.op === 'not_in_segment';
  }
}

/**
 * A segment compiled once per snapshot: its user ids in a Set (10,000 of them are looked up, not scanned),
 * and its conditions, all of which must hold when there are any.
 */
export class CompiledSegment {
  readonly userIds: ReadonlySet<string>;
  readonly conditions: readonly CompiledCondition[];

  constructor(source: SnapshotSegment) {
    this.userIds = new Set((source.userIds ?? []).filter((id) => typeof id === 'string'));
    // A segment's conditions test attributes only; a segment condition inside one never holds.
    this.conditions = (source.conditions ?? []).map((c: AttributeCondition) => new CompiledCondition(c));
  }
}

/**
 * The user id a segment's list is matched against: the one a `userId` condition reads (context.userId,
 * else attributes.userId), when it is a string.
 */
function segmentUserId(context: EvaluationContext): string | undefined {
  let id: unknown = context.userId;
  if (id === undefined) {
    const attributes = context.attributes;
    id = attributes != null && Object.hasOwn(attributes, 'userId') ? attributes.userId : undefined;
  }
  return typeof id === 'string' ? id : undefined;
}

/** A context is in a segment when its user id is listed, or when the segment has conditions and all of them hold. */
export function inSegment(segment: CompiledSegment, context: EvaluationContext): boolean {
  const id = segmentUserId(context);
  if (id !== undefined && segment.userIds.has(id)) return true;
  const conditions = segment.conditions;
  if (conditions.length === 0) return false;
  for (let i = 0; i < conditions.length; i++) {
    const c = conditions[i];
    if (c.isSegment || !conditionHolds(c, readAttribute(context, c))) return false;
  }
  return true;
}

/** Whether a segment condition holds for a context: by membership; one naming an unknown segment never does. */
export function segmentConditionHolds(c: CompiledCondition, context: EvaluationContext): boolean {
  if (c.op === IN_SEGMENT) return inSegment(c.segment!, context);
  if (c.op === NOT_IN_SEGMENT) return !inSegment(c.segment!, context);
  return false;
}

/** Whether a condition holds for a context: a segment condition by membership, any other by its attribute. */
export function conditionHoldsFor(c: CompiledCondition, context: EvaluationContext): boolean {
  return c.isSegment ? segmentConditionHolds(c, context) : conditionHolds(c, readAttribute(context, c));
}

/**
 * The value a condition tests: `context.attributes[attribute]`, except that `userId` reads
 * `context.userId` first, the identity that also drives bucketing, so a rule on userId and the bucket agree
 * on who the user is; `attributes.userId` is the fallback when `context.userId` is absent.
 * Only own properties are attributes: a context without "constructor" has no such attribute, and one sent
 * with "__proto__" (JSON may carry it) has that attribute.
 */
export function readAttribute(context: EvaluationContext, c: CompiledCondition): unknown {
  if (c.readsUserId) {
    const userId = context.userId;
    if (userId !== undefined) return userId;
  }
  const attributes = context.attributes;
  if (attributes == null) return undefined;
  return c.ownOnly && !Object.hasOwn(attributes, c.attribute) ? undefined : attributes[c.attribute];
}

function isMember(list: readonly unknown[], a: unknown): boolean {
  for (let i = 0; i < list.length; i++) if (list[i] === a) return true;
  return false;
}

/**
 * Whether the condition holds for the attribute value `a`. `undefined` is a missing
 * attribute and fails every operator, neq and not_in included. A non-scalar fails eq, neq, in and not_in.
 */
export function conditionHolds(c: CompiledCondition, a: unknown): boolean {
  if (a === undefined) return false;
  switch (c.op) {
    case EQ:
      return a === c.scalar;
    case NEQ:
      return a !== c.scalar && isJsonScalar(a);
    case IN_LIST:
      return isMember(c.list, a);
    case IN_SET:
      return c.set!.has(a);
    case NOT_IN_LIST:
      return isJsonScalar(a) && !isMember(c.list, a);
    case NOT_IN_SET:
      return isJsonScalar(a) && !c.set!.has(a);
    case CONTAINS:
      if (typeof a === 'string') return typeof c.scalar === 'string' && a.includes(c.scalar);
      return Array.isArray(a) && a.indexOf(c.scalar) !== -1;
    case GT:
      return typeof a === 'number' && Number.isFinite(a) && a > c.num;
    case GTE:
      return typeof a === 'number' && Number.isFinite(a) && a >= c.num;
    case LT:
      return typeof a === 'number' && Number.isFinite(a) && a < c.num;
    case LTE:
      return typeof a === 'number' && Number.isFinite(a) && a <= c.num;
    case SEMVER_EQ:
      return typeof a === 'string' && compareSemver(a, c.semver!) === 0;
    case SEMVER_GT:
      return typeof a === 'string' && compareSemver(a, c.semver!) > 0;
    case SEMVER_LT:
      return typeof a === 'string' && compareSemver(a, c.semver!) < 0;
    default:
      return false;
  }
}
