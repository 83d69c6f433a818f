/**
 * Generators of the values flagops reads and evaluates: JSON values, conditions, rules, environment
 * configs, snapshot flags and evaluation contexts. Condition values and context attributes are drawn from
 * small shared pools as often as from the whole space, so that rules match (and fail to) often enough for
 * the evaluation properties to reach every step.
 */

import type { AttributeCondition, Condition, EnvironmentConfig, EvaluationContext, JsonValue, Rule, SnapshotFlag } from '@flagops/core';
import fc from 'fast-check';

/** Objects as JSON.parse and yaml make them, with Object's prototype (fast-check also makes null-prototype ones). */
const PLAIN = { noNullPrototype: true } as const;

/** Strings YAML and our readers treat specially: they look like other types, or hold syntax. */
export const TRICKY_STRINGS = [
  '',
  ' ',
  'on',
  'off',
  'yes',
  'No',
  'y',
  'null',
  'Null',
  'NULL',
  '~',
  'true',
  'True',
  'TRUE',
  'false',
  'tRue',
  '0',
  '-0',
  '+5',
  '007',
  '0x1F',
  '0o17',
  '1e3',
  '1E-3',
  '.5',
  '5.',
  '1_000',
  '1.2.3',
  '4.1.0-rc.1',
  '.inf',
  '-.Inf',
  '.nan',
  '12:30',
  '2001-12-14',
  ' x',
  'x ',
  'a: b',
  'a:b',
  ':',
  '- x',
  '-',
  '#x',
  'x #y',
  '[x]',
  '{x}',
  'a,b',
  '!tag',
  '&a',
  '*a',
  '|',
  '>',
  '%x',
  '@x',
  '`x',
  '?',
  '? x',
  '"q"',
  "it's",
  '\\',
  '\\n',
  '\t',
  '\r\n',
  '\n',
  'a\nb',
  'é',
  'e\u0301',
  '日本',
  '🚀',
  '\u2028',
  '\uFEFF',
  '\u0085',
  '\u00a0',
  '__proto__',
  'constructor',
  'toString',
  'http://example.com/a?b=c#d',
  '@example.com',
  '---',
  '...',
];

/** Any string: ASCII, grapheme and raw UTF-16 (lone surrogates too), or one of the tricky ones. */
export const anyString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...TRICKY_STRINGS),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.array(fc.constantFrom(...TRICKY_STRINGS), { minLength: 2, maxLength: 4 }).map((parts) => parts.join('')),
);

/** Numbers JSON can carry: integers, fractions, extremes, -0. */
export const finiteNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0.1, 0.2 + 0.1, 1e21, 1e-7, 5e-324, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, -0, 100, 33.33),
);

export const jsonScalar: fc.Arbitrary<JsonValue> = fc.oneof(anyString, finiteNumber, fc.boolean(), fc.constant(null));

/** Any JSON value a request may carry, up to `maxDepth` deep, with keys from anyString. */
export function jsonValue(maxDepth = 4): fc.Arbitrary<JsonValue> {
  const { value } = fc.letrec<{ value: JsonValue }>((tie) => ({
    value: fc.oneof(
      { maxDepth, depthSize: 'small', withCrossShrink: true },
      jsonScalar,
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(anyString, tie('value'), { maxKeys: 4, noNullPrototype: true }),
    ),
  }));
  return value;
}

/** A value nested up to `maxDepth` arrays or objects deep: parsers and serializers that recurse meet their limits. */
export function deeplyNested(maxDepth: number): fc.Arbitrary<JsonValue> {
  return fc.tuple(fc.integer({ min: 1, max: maxDepth }), fc.boolean(), jsonScalar).map(([depth, arrays, leaf]) => {
    let value: JsonValue = leaf;
    for (let i = 0; i < depth; i++) value = arrays ? [value] : { a: value };
    return value;
  });
}

/** Values shared by conditions and contexts, so conditions hold often. */
const POOL_SCALARS: JsonValue[] = ['DE', 'FR', 'pro', 'free', '1.2.3', '2.0.0', '', 'true', 0, 1, 10, -3.5, 99.99, true, false, null];
const poolScalar = fc.constantFrom(...POOL_SCALARS);
const semverText = fc.oneof(
  fc.constantFrom('1.2.3', '2.0.0', '1.2.3-beta.1', '1.2.3-alpha', '0.0.0', '10.20.30+build.5', '1.0.0-0.3.7'),
  fc
    .tuple(
      fc.nat(12),
      fc.nat(12),
      fc.nat(12),
      fc.option(fc.constantFrom('rc.1', 'alpha', 'beta.2', '0')),
      fc.option(fc.constantFrom('build', 'sha.5')),
    )
    .map(([a, b, c, pre, build]) => `${a}.${b}.${c}${pre === null ? '' : `-${pre}`}${build === null ? '' : `+${build}`}`),
);
const conditionScalar = fc.oneof(poolScalar, jsonScalar);
const ruleNumber = fc.oneof(fc.constantFrom(0, 1, 10, -3.5, 99.99), finiteNumber);

export const ATTRIBUTES = ['country', 'plan', 'appVersion', 'age', 'tags', 'userId', 'email'] as const;
const attributeName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ATTRIBUTES) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
);

/** A condition whose value has the type its operator needs (what the schema accepts). */
export const condition: fc.Arbitrary<Condition> = fc.oneof(
  fc.record(
    { attribute: attributeName, op: fc.constantFrom('eq' as const, 'neq' as const, 'contains' as const), value: conditionScalar },
    PLAIN,
  ),
  fc.record(
    { attribute: attributeName, op: fc.constantFrom('in' as const, 'not_in' as const), value: fc.array(conditionScalar, { maxLength: 5 }) },
    PLAIN,
  ),
  fc.record(
    { attribute: attributeName, op: fc.constantFrom('gt' as const, 'gte' as const, 'lt' as const, 'lte' as const), value: ruleNumber },
    PLAIN,
  ),
  fc.record(
    { attribute: attributeName, op: fc.constantFrom('semver_eq' as const, 'semver_gt' as const, 'semver_lt' as const), value: semverText },
    PLAIN,
  ),
);

/** A percentage from 0 to 100: the edges, whole numbers and fractions. */
export const percentage: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, 100, 50, 0.01, 99.99),
  fc.integer({ min: 0, max: 100 }),
  fc.double({ min: 0, max: 100, noNaN: true }),
);

export const ruleId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,15}$/);

/** A rule as stored: its id, serve, conditions, and now and then a description and a rolloutPct. */
export const rule: fc.Arbitrary<Rule> = fc
  .record(
    {
      id: ruleId,
      description: anyString,
      serve: fc.constantFrom('on' as const, 'off' as const),
      rolloutPct: percentage,
      conditions: fc.array(condition, { maxLength: 3 }),
    },
    { requiredKeys: ['id', 'serve', 'conditions'], noNullPrototype: true },
  )
  .map((r) => {
    // The key order normalize.ts gives, so a written and read-back rule compares equal.
    const out = { id: r.id } as Rule;
    if (r.description !== undefined) out.description = r.description;
    out.serve = r.serve;
    if (r.rolloutPct !== undefined) out.rolloutPct = r.rolloutPct;
    out.conditions = r.conditions;
    return out;
  });

/** A config's rules: rule ids are unique within a config. */
export const rules: fc.Arbitrary<Rule[]> = fc.uniqueArray(rule, { selector: (r) => r.id, maxLength: 4 });

export const flagKey = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/).filter((key) => key.toLowerCase() !== 'kills');

/** An environment config as the repository holds it. */
export function environmentConfig(value: fc.Arbitrary<JsonValue> = jsonValue()): fc.Arbitrary<EnvironmentConfig> {
  return fc.record(
    {
      enabled: fc.boolean(),
      rolloutPct: percentage,
      valueOn: value,
      valueOff: value,
      version: fc.nat(1_000_000),
      rules,
    },
    PLAIN,
  );
}

/** A snapshot entry: an environment config plus killed, archived and defaultValue. */
export const snapshotFlag: fc.Arbitrary<SnapshotFlag> = fc.record(
  {
    enabled: fc.boolean(),
    rolloutPct: percentage,
    valueOn: jsonValue(2),
    valueOff: jsonValue(2),
    rules,
    killed: fc.boolean(),
    archived: fc.boolean(),
    defaultValue: jsonValue(2),
  },
  PLAIN,
);

/** A snapshot's flags: up to five, keyed by flag key. */
export const snapshotFlags: fc.Arbitrary<Record<string, SnapshotFlag>> = fc.dictionary(flagKey, snapshotFlag, {
  minKeys: 1,
  maxKeys: 5,
  noNullPrototype: true,
});

const attributeValue: fc.Arbitrary<unknown> = fc.oneof(
  poolScalar,
  semverText,
  jsonScalar,
  fc.array(fc.oneof(poolScalar, jsonScalar), { maxLength: 4 }),
  fc.dictionary(anyString, jsonScalar, { maxKeys: 2, noNullPrototype: true }),
);

/** A valid context: a user id (sometimes empty, sometimes absent) and attributes named like the conditions'. */
export const context: fc.Arbitrary<EvaluationContext> = fc.record(
  {
    userId: fc.oneof(fc.constantFrom('user-1', 'user-42', ''), anyString),
    attributes: fc.dictionary(fc.oneof(fc.constantFrom(...ATTRIBUTES), anyString), attributeValue, { maxKeys: 5, noNullPrototype: true }),
  },
  { requiredKeys: [], noNullPrototype: true },
);

/** Variant names shared by variants, rules serving them and prerequisites asking for them, so that they meet. */
const VARIANT_NAMES = ['control', 'treatment', 'express'] as const;
/** Segment keys shared by segments and the conditions naming them; `nobody` is never a segment. */
const SEGMENT_KEYS = ['beta', 'staff', 'nobody'] as const;

/** Weights in hundredths of a percent: adding up to 100 (what the repository accepts), or anything (a snapshot built by hand). */
const variantWeights = (n: number): fc.Arbitrary<number[]> =>
  fc.oneof(
    fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: n - 1, maxLength: n - 1 }).map((cuts) => {
      const sorted = [...cuts].sort((a, b) => a - b);
      return [...sorted, 10_000].map((cut, i) => (cut - (i === 0 ? 0 : sorted[i - 1])) / 100);
    }),
    fc.array(
      fc.integer({ min: 0, max: 10_000 }).map((h) => h / 100),
      { minLength: n, maxLength: n },
    ),
  );

const variants: fc.Arbitrary<{ name: string; value: JsonValue; weight: number }[]> = fc
  .shuffledSubarray([...VARIANT_NAMES], { minLength: 1 })
  .chain((names) =>
    fc
      .tuple(fc.array(jsonValue(1), { minLength: names.length, maxLength: names.length }), variantWeights(names.length))
      .map(([values, weights]) => names.map((name, i) => ({ name, value: values[i], weight: weights[i] }))),
  );

const segmentCondition: fc.Arbitrary<Condition> = fc.record(
  { op: fc.constantFrom('in_segment' as const, 'not_in_segment' as const), value: fc.constantFrom(...SEGMENT_KEYS) },
  PLAIN,
);

/** A rule that may also serve a variant by name and test segment membership. */
const richRule: fc.Arbitrary<Rule> = fc
  .tuple(rule, fc.constantFrom('on', 'off', ...VARIANT_NAMES), fc.array(fc.oneof(condition, segmentCondition), { maxLength: 3 }))
  .map(([r, serve, conditions]) => ({ ...r, serve: serve as Rule['serve'], conditions }));

const SEGMENT_USER_IDS = ['user-1', 'user-42', '', 'DE'];

/** A segment: some of the user ids the contexts use, and attribute conditions. */
const segment: fc.Arbitrary<{ userIds: string[]; conditions: AttributeCondition[] }> = fc.record(
  {
    userIds: fc.subarray(SEGMENT_USER_IDS),
    conditions: fc.array(condition as fc.Arbitrary<AttributeCondition>, { maxLength: 2 }),
  },
  PLAIN,
);

/** A flag's prerequisites: on flags after it in `later` (so never in a cycle: the repository refuses those) or on flags the environment lacks. */
const prerequisitesOn = (later: readonly string[]) =>
  fc.option(
    fc.uniqueArray(
      fc.record(
        {
          flag: later.length > 0 ? fc.oneof(fc.constantFrom(...later), flagKey) : flagKey,
          variation: fc.constantFrom('on', 'off', 'default', ...VARIANT_NAMES),
        },
        PLAIN,
      ),
      { selector: (p) => p.flag, minLength: 1, maxLength: 3 },
    ),
    { nil: undefined },
  );

/**
 * An environment as its snapshot serves it, with everything a flag can hold: variants, rules serving them,
 * segment conditions, prerequisites on the environment's other flags (and on flags it lacks), and the
 * project's segments. Prerequisites form no cycle, as in every snapshot the service serves.
 */
export const environmentSnapshot: fc.Arbitrary<{
  flags: Record<string, SnapshotFlag>;
  segments: Record<string, { userIds: string[]; conditions: AttributeCondition[] }>;
}> = fc.uniqueArray(flagKey, { minLength: 1, maxLength: 5 }).chain((keys) =>
  fc.record({
    flags: fc
      .tuple(
        ...keys.map((_, i) =>
          fc.record(
            {
              base: snapshotFlag,
              rules: fc.uniqueArray(richRule, { selector: (r) => r.id, maxLength: 4 }),
              variants: fc.option(variants, { nil: undefined }),
              prerequisites: prerequisitesOn(keys.slice(i + 1)).map((list) => list?.filter((p) => !keys.slice(0, i + 1).includes(p.flag))),
            },
            { requiredKeys: ['base', 'rules'], noNullPrototype: true },
          ),
        ),
      )
      .map((built) => {
        const flags: Record<string, SnapshotFlag> = {};
        keys.forEach((key, i) => {
          const { base, rules: flagRules, variants: flagVariants, prerequisites } = built[i];
          const flag: SnapshotFlag = { ...base, rules: flagRules };
          if (flagVariants !== undefined) flag.variants = flagVariants;
          if (prerequisites !== undefined && prerequisites.length > 0) flag.prerequisites = prerequisites;
          flags[key] = flag;
        });
        return flags;
      }),
    segments: fc.dictionary(fc.constantFrom('beta', 'staff'), segment, { noNullPrototype: true }),
  }),
);
