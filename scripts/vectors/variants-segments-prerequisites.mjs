// Vector cases for variants, segments and prerequisites, added to evaluation.json by evaluation.mjs.
// Variant buckets come from murmurhash-js like every other bucket here; user ids are searched for so that
// they land exactly on and beside the weight boundaries.
import murmurhash from 'murmurhash-js';

function reference(s) {
  const bytes = new TextEncoder().encode(s);
  return murmurhash.murmur3(String.fromCharCode(...bytes), 0) % 10000;
}

/** The variant bucket in hundredths: murmur3("<flagKey>/variant/<userId>") mod 10000. */
export function referenceVariantHundredths(flagKey, userId) {
  return reference(`${flagKey}/variant/${userId}`);
}

const found = new Map();

/** The first `user-<n>` whose variant bucket (hundredths) for `flagKey` is exactly `h`. */
function userAtVariantBucket(flagKey, h) {
  const key = `${flagKey} ${h}`;
  if (!found.has(key)) {
    for (let i = 0; ; i++) {
      if (referenceVariantHundredths(flagKey, `user-${i}`) === h) {
        found.set(key, `user-${i}`);
        break;
      }
    }
  }
  return found.get(key);
}

/** The first `user-<n>` for which `predicate(bucket, variantHundredths)` holds. */
function userWhere(flagKey, predicate) {
  for (let i = 0; ; i++) {
    const userId = `user-${i}`;
    const b = reference(`${flagKey}/${userId}`) / 100;
    const v = referenceVariantHundredths(flagKey, userId);
    if (predicate(b, v)) return { userId, bucket: b, variantBucket: v / 100 };
  }
}

/** The variant a bucket in hundredths falls in, computed independently of the core: cumulative hundredths. */
function variantFor(variants, h) {
  let upTo = 0;
  for (const v of variants) {
    upTo += Math.round(v.weight * 100);
    if (h < upTo) return v;
  }
  throw new Error('weights do not cover the bucket');
}

export function addVariantSegmentPrerequisiteCases({ add, flag }) {
  const OFF = 'grey';
  const DEFAULT = 'legacy';
  const served = (variant, reason, extra = {}) => ({ value: variant.value, reason, variation: variant.name, ...extra });

  // ---- Variants: the variant bucket against the cumulative weights, at and beside every boundary. ----
  const splits = [
    {
      label: '50/50',
      key: 'ab-half',
      variants: [
        { name: 'control', value: 'blue', weight: 50 },
        { name: 'treatment', value: 'green', weight: 50 },
      ],
    },
    {
      label: 'thirds 33.33/33.33/33.34',
      key: 'abc-thirds',
      variants: [
        { name: 'red', value: 'red', weight: 33.33 },
        { name: 'green', value: 'green', weight: 33.33 },
        { name: 'blue', value: 'blue', weight: 33.34 },
      ],
    },
    {
      label: '0.01/99.99',
      key: 'ab-tiny',
      variants: [
        { name: 'rare', value: 'rare', weight: 0.01 },
        { name: 'common', value: 'common', weight: 99.99 },
      ],
    },
    {
      label: '50/0/50 (a variant of weight 0 is never drawn)',
      key: 'ab-zero-middle',
      variants: [
        { name: 'left', value: 1, weight: 50 },
        { name: 'middle', value: 2, weight: 0 },
        { name: 'right', value: 3, weight: 50 },
      ],
    },
    {
      label: '10/20/30/40',
      key: 'abcd',
      variants: [
        { name: 'v1', value: { tier: 1 }, weight: 10 },
        { name: 'v2', value: { tier: 2 }, weight: 20 },
        { name: 'v3', value: { tier: 3 }, weight: 30 },
        { name: 'v4', value: { tier: 4 }, weight: 40 },
      ],
    },
  ];
  for (const { label, key, variants } of splits) {
    const boundaries = new Set([0, 9999]);
    let upTo = 0;
    for (const v of variants.slice(0, -1)) {
      upTo += Math.round(v.weight * 100);
      if (upTo > 0) boundaries.add(upTo - 1);
      boundaries.add(upTo);
    }
    const f = flag({ rolloutPct: 100, valueOn: 'unused-on', variants });
    for (const h of [...boundaries].sort((a, b) => a - b)) {
      const userId = userAtVariantBucket(key, h);
      const variant = variantFor(variants, h);
      add(
        `variants ${label}: variant bucket ${h / 100} serves ${variant.name}`,
        key,
        f,
        { userId },
        served(variant, 'default', { variantBucket: h / 100 }),
      );
    }
  }

  const ab = [
    { name: 'control', value: 'blue', weight: 50 },
    { name: 'treatment', value: 'green', weight: 50 },
  ];
  {
    const key = 'ab-rollout';
    const f = flag({ rolloutPct: 40, variants: ab });
    const inA = userWhere(key, (b, v) => b < 40 && v < 5000);
    const inB = userWhere(key, (b, v) => b < 40 && v >= 5000);
    const out = userWhere(key, (b) => b >= 40);
    add(
      'variants: a rollout serves the variant of the variant bucket, with both buckets (control)',
      key,
      f,
      { userId: inA.userId },
      served(ab[0], 'rollout', { bucket: inA.bucket, variantBucket: inA.variantBucket }),
    );
    add(
      'variants: a rollout serves the variant of the variant bucket, with both buckets (treatment)',
      key,
      f,
      { userId: inB.userId },
      served(ab[1], 'rollout', { bucket: inB.bucket, variantBucket: inB.variantBucket }),
    );
    add(
      'variants: outside the rollout serves valueOff, no variant bucket',
      key,
      f,
      { userId: out.userId },
      { value: OFF, reason: 'rollout', variation: 'off', bucket: out.bucket },
    );
    add('variants: a rollout without userId serves valueOff', key, f, {}, { value: OFF, reason: 'rollout', variation: 'off' });
    add(
      'variants: rolloutPct 0 serves valueOff',
      key,
      flag({ rolloutPct: 0, variants: ab }),
      { userId: inA.userId },
      { value: OFF, reason: 'default', variation: 'off' },
    );
  }
  {
    const key = 'ab-rule';
    const f = flag({ variants: ab, rules: [{ id: 'beta', conditions: [{ attribute: 'plan', op: 'eq', value: 'beta' }], serve: 'on' }] });
    const a = userWhere(key, (_b, v) => v < 5000);
    const b = userWhere(key, (_b, v) => v >= 5000);
    add(
      'variants: a rule serving on serves the variant of the variant bucket (control)',
      key,
      f,
      { userId: a.userId, attributes: { plan: 'beta' } },
      served(ab[0], 'rule_match', { ruleId: 'beta', variantBucket: a.variantBucket }),
    );
    add(
      'variants: a rule serving on serves the variant of the variant bucket (treatment)',
      key,
      f,
      { userId: b.userId, attributes: { plan: 'beta' } },
      served(ab[1], 'rule_match', { ruleId: 'beta', variantBucket: b.variantBucket }),
    );
    add(
      'variants: a rule serving on without userId serves the first variant with weight',
      key,
      f,
      { attributes: { plan: 'beta' } },
      served(ab[0], 'rule_match', { ruleId: 'beta' }),
    );
    add(
      'variants: an empty userId counts as none',
      key,
      f,
      { userId: '', attributes: { plan: 'beta' } },
      served(ab[0], 'rule_match', { ruleId: 'beta' }),
    );
    add(
      'variants: when no rule matches, rolloutPct 0 serves valueOff',
      key,
      f,
      { userId: a.userId, attributes: { plan: 'free' } },
      { value: OFF, reason: 'default', variation: 'off' },
    );
  }
  {
    const key = 'ab-rule-rollout';
    const f = flag({ variants: ab, rules: [{ id: 'half', conditions: [], serve: 'on', rolloutPct: 50 }] });
    const inside = userWhere(key, (b, v) => b < 50 && v >= 5000);
    const outside = userWhere(key, (b) => b >= 50);
    add(
      'variants: a rule with rolloutPct serves a variant with bucket and variant bucket',
      key,
      f,
      { userId: inside.userId },
      served(ab[1], 'rule_match', { ruleId: 'half', bucket: inside.bucket, variantBucket: inside.variantBucket }),
    );
    add(
      'variants: a rule with rolloutPct that does not apply falls through to the rollout',
      key,
      f,
      { userId: outside.userId },
      { value: OFF, reason: 'default', variation: 'off' },
    );
  }
  {
    const key = 'ab-named';
    const f = flag({
      rolloutPct: 100,
      variants: ab,
      rules: [
        { id: 'staff', conditions: [{ attribute: 'staff', op: 'eq', value: true }], serve: 'treatment' },
        { id: 'legacy', conditions: [{ attribute: 'legacy', op: 'eq', value: true }], serve: 'off' },
        { id: 'some', conditions: [{ attribute: 'some', op: 'eq', value: true }], serve: 'control', rolloutPct: 50 },
      ],
    });
    const a = userWhere(key, (_b, v) => v < 5000);
    add(
      'variants: a rule naming a variant serves it to every matching context',
      key,
      f,
      { userId: a.userId, attributes: { staff: true } },
      served(ab[1], 'rule_match', { ruleId: 'staff' }),
    );
    add(
      'variants: a rule naming a variant serves it without userId too',
      key,
      f,
      { attributes: { staff: true } },
      served(ab[1], 'rule_match', { ruleId: 'staff' }),
    );
    add(
      'variants: a rule serving off still serves valueOff',
      key,
      f,
      { userId: a.userId, attributes: { legacy: true } },
      { value: OFF, reason: 'rule_match', variation: 'off', ruleId: 'legacy' },
    );
    const inside = userWhere(key, (b) => b < 50);
    add(
      'variants: a rule naming a variant with rolloutPct reports the bucket',
      key,
      f,
      { userId: inside.userId, attributes: { some: true } },
      served(ab[0], 'rule_match', { ruleId: 'some', bucket: inside.bucket }),
    );
    add(
      'variants: rolloutPct 100 without userId serves the first variant with weight, reason default',
      key,
      f,
      {},
      served(ab[0], 'default'),
    );
  }
  {
    const key = 'ab-first-zero';
    const variants = [
      { name: 'none', value: 'n', weight: 0 },
      { name: 'all', value: 'a', weight: 100 },
    ];
    const f = flag({ rolloutPct: 100, variants });
    add('variants: without userId the first variant with a weight above 0 is served', key, f, {}, served(variants[1], 'default'));
    const u = userAtVariantBucket(key, 0);
    add(
      'variants: a variant of weight 0 first is never drawn, even at variant bucket 0',
      key,
      f,
      { userId: u },
      served(variants[1], 'default', { variantBucket: 0 }),
    );
  }
  {
    const key = 'ab-steps';
    const f = flag({ rolloutPct: 100, variants: ab, rules: [{ id: 'all', conditions: [], serve: 'on' }] });
    add(
      'variants: killed serves valueOff',
      key,
      { ...f, killed: true },
      { userId: 'u' },
      { value: OFF, reason: 'killed', variation: 'off' },
    );
    add(
      'variants: disabled serves valueOff',
      key,
      { ...f, enabled: false },
      { userId: 'u' },
      { value: OFF, reason: 'flag_disabled', variation: 'off' },
    );
    add(
      'variants: archived serves defaultValue',
      key,
      { ...f, archived: true },
      { userId: 'u' },
      { value: DEFAULT, reason: 'archived', variation: 'default' },
    );
    add('variants: the kill overlay serves valueOff', key, f, { userId: 'u' }, { value: OFF, reason: 'killed', variation: 'off' }, [key]);
  }
  {
    const key = 'ab-unicode';
    const variants = [
      { name: 'a', value: 1, weight: 50 },
      { name: 'b', value: 2, weight: 50 },
    ];
    const f = flag({ rolloutPct: 100, valueOn: 0, valueOff: -1, defaultValue: 0, variants });
    for (const userId of ['Zoë', '用户-7', '🙂-smile']) {
      const h = referenceVariantHundredths(key, userId);
      add(
        `variants: the variant bucket hashes UTF-8 bytes (${userId})`,
        key,
        f,
        { userId },
        served(variantFor(variants, h), 'default', { variantBucket: h / 100 }),
      );
    }
  }
  {
    // The variant bucket is not the rollout bucket: the same user, different hash inputs.
    const key = 'ab-independent';
    const f = flag({ rolloutPct: 50, variants: ab });
    const u = userWhere(key, (b, v) => b < 10 && v >= 9000);
    add(
      'variants: the variant bucket is hashed apart from the rollout bucket',
      key,
      f,
      { userId: u.userId },
      served(ab[1], 'rollout', { bucket: u.bucket, variantBucket: u.variantBucket }),
    );
  }

  // ---- Segments: by user id list, by conditions, both, and not_in_segment. ----
  const segments = {
    'beta-testers': { userIds: ['ana', 'bo', 'chen'], conditions: [] },
    'eu-pro': {
      userIds: [],
      conditions: [
        { attribute: 'country', op: 'in', value: ['DE', 'FR', 'IT'] },
        { attribute: 'plan', op: 'eq', value: 'pro' },
      ],
    },
    staff: { userIds: ['root'], conditions: [{ attribute: 'email', op: 'contains', value: '@example.com' }] },
    empty: { userIds: [], conditions: [] },
    many: { userIds: Array.from({ length: 500 }, (_, i) => `member-${i}`), conditions: [] },
  };
  // Each case carries the segments it refers to (an unknown one: the others, so the environment has some).
  const only = (...keys) => Object.fromEntries(keys.filter((k) => k in segments).map((k) => [k, segments[k]]));
  const segmentFlag = (op, segment, extra = {}) =>
    flag({ rules: [{ id: 'seg', conditions: [{ op, value: segment }], serve: 'on', ...extra }] });
  const inRule = { value: 'blue', reason: 'rule_match', variation: 'on', ruleId: 'seg' };
  const noRule = { value: OFF, reason: 'default', variation: 'off' };
  const segmentCase = (name, op, segment, context, holds) =>
    add(`segments: ${name}`, 'seg-flag', segmentFlag(op, segment), context, holds ? inRule : noRule, undefined, {
      segments: only(segment),
    });
  segmentCase('a listed user id is in the segment', 'in_segment', 'beta-testers', { userId: 'bo' }, true);
  segmentCase('an unlisted user id is not', 'in_segment', 'beta-testers', { userId: 'dana' }, false);
  segmentCase('user ids are compared exactly (case matters)', 'in_segment', 'beta-testers', { userId: 'Bo' }, false);
  segmentCase('without userId a list-only segment never matches', 'in_segment', 'beta-testers', { attributes: { plan: 'pro' } }, false);
  segmentCase(
    'attributes.userId stands in when context.userId is absent',
    'in_segment',
    'beta-testers',
    { attributes: { userId: 'chen' } },
    true,
  );
  segmentCase('a number userId attribute is not a listed id', 'in_segment', 'beta-testers', { attributes: { userId: 7 } }, false);
  segmentCase('a listed id among 500 is found', 'in_segment', 'many', { userId: 'member-437' }, true);
  segmentCase('an id not among 500 is not', 'in_segment', 'many', { userId: 'member-500' }, false);
  segmentCase(
    'all conditions hold: in the segment',
    'in_segment',
    'eu-pro',
    { userId: 'x', attributes: { country: 'FR', plan: 'pro' } },
    true,
  );
  segmentCase(
    'one condition fails: not in the segment',
    'in_segment',
    'eu-pro',
    { userId: 'x', attributes: { country: 'US', plan: 'pro' } },
    false,
  );
  segmentCase('a missing attribute: not in the segment', 'in_segment', 'eu-pro', { userId: 'x', attributes: { country: 'FR' } }, false);
  segmentCase('conditions hold without any userId', 'in_segment', 'eu-pro', { attributes: { country: 'IT', plan: 'pro' } }, true);
  segmentCase(
    'listed though its conditions fail',
    'in_segment',
    'staff',
    { userId: 'root', attributes: { email: 'root@other.org' } },
    true,
  );
  segmentCase(
    'not listed but its conditions hold',
    'in_segment',
    'staff',
    { userId: 'eve', attributes: { email: 'eve@example.com' } },
    true,
  );
  segmentCase('neither listed nor matching', 'in_segment', 'staff', { userId: 'eve', attributes: { email: 'eve@other.org' } }, false);
  segmentCase('an empty segment holds nobody', 'in_segment', 'empty', { userId: 'ana', attributes: {} }, false);
  segmentCase('not_in_segment holds for a user not listed', 'not_in_segment', 'beta-testers', { userId: 'dana' }, true);
  segmentCase('not_in_segment fails for a listed user', 'not_in_segment', 'beta-testers', { userId: 'ana' }, false);
  segmentCase('not_in_segment holds without userId for a list-only segment', 'not_in_segment', 'beta-testers', {}, true);
  segmentCase(
    'not_in_segment fails when the conditions hold',
    'not_in_segment',
    'eu-pro',
    { attributes: { country: 'DE', plan: 'pro' } },
    false,
  );
  segmentCase('not_in_segment holds for everyone on an empty segment', 'not_in_segment', 'empty', { userId: 'ana' }, true);
  segmentCase('in_segment of an unknown segment never holds', 'in_segment', 'no-such-segment', { userId: 'ana' }, false);
  segmentCase('not_in_segment of an unknown segment never holds either', 'not_in_segment', 'no-such-segment', { userId: 'ana' }, false);
  {
    const f = flag({
      rules: [
        {
          id: 'seg',
          conditions: [
            { op: 'in_segment', value: 'beta-testers' },
            { attribute: 'appVersion', op: 'semver_gt', value: '2.0.0' },
          ],
          serve: 'on',
        },
      ],
    });
    add(
      'segments: a segment condition beside an attribute condition, both hold',
      'seg-flag',
      f,
      { userId: 'ana', attributes: { appVersion: '2.1.0' } },
      inRule,
      undefined,
      { segments: only('beta-testers') },
    );
    add(
      'segments: a segment condition beside an attribute condition, the attribute fails',
      'seg-flag',
      f,
      { userId: 'ana', attributes: { appVersion: '1.9.0' } },
      noRule,
      undefined,
      { segments: only('beta-testers') },
    );
  }
  {
    const key = 'seg-rollout';
    const f = flag({ rules: [{ id: 'seg', conditions: [{ op: 'in_segment', value: 'many' }], serve: 'on', rolloutPct: 50 }] });
    const inside = userWhere(key, (b) => b < 50);
    const member = { userId: inside.userId, attributes: {} };
    const segs = { many: { userIds: [inside.userId], conditions: [] } };
    add(
      'segments: a segment rule with rolloutPct applies below it, with bucket',
      key,
      f,
      member,
      { ...inRule, bucket: inside.bucket },
      undefined,
      { segments: segs },
    );
    const outside = userWhere(key, (b) => b >= 50);
    add('segments: a segment rule with rolloutPct does not apply above it', key, f, { userId: outside.userId }, noRule, undefined, {
      segments: { many: { userIds: [outside.userId], conditions: [] } },
    });
  }
  {
    const f = flag({ variants: ab, rules: [{ id: 'seg', conditions: [{ op: 'in_segment', value: 'beta-testers' }], serve: 'treatment' }] });
    add(
      'segments: a segment rule serving a variant by name',
      'seg-variant',
      f,
      { userId: 'chen' },
      served(ab[1], 'rule_match', { ruleId: 'seg' }),
      undefined,
      { segments: only('beta-testers') },
    );
  }

  // ---- Prerequisites (step 3½): other flags of the environment, evaluated for the same context. ----
  const onFlag = (extra = {}) => flag({ rolloutPct: 100, ...extra });
  const failed = (prerequisiteKey) => ({ value: OFF, reason: 'prerequisite_failed', variation: 'off', prerequisiteKey });
  const passed = { value: 'blue', reason: 'default', variation: 'on' };
  const dependent = (prerequisites, extra = {}) => onFlag({ prerequisites, ...extra });
  const pre = (name, f, flags, context, expected, killedKeys) =>
    add(`prerequisites: ${name}`, 'dependent', f, context, expected, killedKeys, { flags });

  pre(
    'a prerequisite serving on lets the flag go on',
    dependent([{ flag: 'base', variation: 'on' }]),
    { base: onFlag() },
    { userId: 'u' },
    passed,
  );
  pre(
    'a disabled prerequisite fails it',
    dependent([{ flag: 'base', variation: 'on' }]),
    { base: onFlag({ enabled: false }) },
    { userId: 'u' },
    failed('base'),
  );
  pre(
    'a prerequisite at rollout 0 fails it',
    dependent([{ flag: 'base', variation: 'on' }]),
    { base: flag() },
    { userId: 'u' },
    failed('base'),
  );
  pre(
    'a killed prerequisite (snapshot) fails it',
    dependent([{ flag: 'base', variation: 'on' }]),
    { base: onFlag({ killed: true }) },
    { userId: 'u' },
    failed('base'),
  );
  pre(
    'a prerequisite killed by the overlay fails it',
    dependent([{ flag: 'base', variation: 'on' }]),
    { base: onFlag() },
    { userId: 'u' },
    failed('base'),
    ['base'],
  );
  pre(
    "the overlay alone decides a prerequisite's kill",
    dependent([{ flag: 'base', variation: 'on' }]),
    { base: onFlag({ killed: true }) },
    { userId: 'u' },
    passed,
    [],
  );
  pre(
    'requiring off is met by a killed prerequisite',
    dependent([{ flag: 'base', variation: 'off' }]),
    { base: onFlag({ killed: true }) },
    {},
    passed,
  );
  pre(
    'requiring off fails when the prerequisite is on',
    dependent([{ flag: 'base', variation: 'off' }]),
    { base: onFlag() },
    {},
    failed('base'),
  );
  pre(
    'an archived prerequisite serves default, not on',
    dependent([{ flag: 'base', variation: 'on' }]),
    { base: onFlag({ archived: true }) },
    {},
    failed('base'),
  );
  pre(
    'requiring default is met by an archived prerequisite',
    dependent([{ flag: 'base', variation: 'default' }]),
    { base: onFlag({ archived: true }) },
    {},
    passed,
  );
  pre('an unknown prerequisite flag fails it', dependent([{ flag: 'gone', variation: 'on' }]), {}, {}, failed('gone'));
  pre(
    "the dependent's own kill comes first",
    dependent([{ flag: 'base', variation: 'on' }], { killed: true }),
    { base: flag() },
    {},
    { value: OFF, reason: 'killed', variation: 'off' },
  );
  pre(
    'the dependent being disabled comes first',
    dependent([{ flag: 'base', variation: 'on' }], { enabled: false }),
    { base: flag() },
    {},
    { value: OFF, reason: 'flag_disabled', variation: 'off' },
  );
  pre(
    'the dependent being archived comes first',
    dependent([{ flag: 'base', variation: 'on' }], { archived: true }),
    { base: flag() },
    {},
    { value: DEFAULT, reason: 'archived', variation: 'default' },
  );
  pre(
    'prerequisites come before rules',
    dependent([{ flag: 'base', variation: 'on' }], { rules: [{ id: 'all', conditions: [], serve: 'on' }] }),
    { base: flag() },
    {},
    failed('base'),
  );
  pre(
    'the first failing prerequisite is named',
    dependent([
      { flag: 'a', variation: 'on' },
      { flag: 'b', variation: 'on' },
      { flag: 'c', variation: 'on' },
    ]),
    { a: onFlag(), b: flag(), c: flag() },
    {},
    failed('b'),
  );
  pre(
    'every prerequisite met',
    dependent([
      { flag: 'a', variation: 'on' },
      { flag: 'b', variation: 'off' },
    ]),
    { a: onFlag(), b: flag() },
    {},
    passed,
  );
  {
    const country = { attribute: 'country', op: 'eq', value: 'DE' };
    const base = flag({ rules: [{ id: 'de', conditions: [country], serve: 'on' }] });
    pre(
      'a prerequisite is evaluated for the same context (met)',
      dependent([{ flag: 'base', variation: 'on' }]),
      { base },
      { attributes: { country: 'DE' } },
      passed,
    );
    pre(
      'a prerequisite is evaluated for the same context (not met)',
      dependent([{ flag: 'base', variation: 'on' }]),
      { base },
      { attributes: { country: 'FR' } },
      failed('base'),
    );
    const segBase = flag({ rules: [{ id: 'beta', conditions: [{ op: 'in_segment', value: 'beta-testers' }], serve: 'on' }] });
    add(
      'prerequisites: a prerequisite targeting a segment, member',
      'dependent',
      dependent([{ flag: 'base', variation: 'on' }]),
      { userId: 'ana' },
      passed,
      undefined,
      { flags: { base: segBase }, segments: only('beta-testers') },
    );
    add(
      'prerequisites: a prerequisite targeting a segment, non-member',
      'dependent',
      dependent([{ flag: 'base', variation: 'on' }]),
      { userId: 'zed' },
      failed('base'),
      undefined,
      { flags: { base: segBase }, segments: only('beta-testers') },
    );
  }
  {
    // Nested: top requires middle, middle requires bottom.
    const middle = dependent([{ flag: 'bottom', variation: 'on' }]);
    const top = dependent([{ flag: 'middle', variation: 'on' }]);
    pre('nested: all on', top, { middle, bottom: onFlag() }, {}, passed);
    pre(
      'nested: the bottom off fails the middle, and so the top, naming the middle',
      top,
      { middle, bottom: flag() },
      {},
      failed('middle'),
    );
    pre('nested: the bottom killed by the overlay turns the chain off', top, { middle, bottom: onFlag() }, {}, failed('middle'), [
      'bottom',
    ]);
    pre(
      'nested: requiring the middle off is met when the bottom is off',
      dependent([{ flag: 'middle', variation: 'off' }]),
      { middle, bottom: flag() },
      {},
      passed,
    );
    const deep = {
      l1: dependent([{ flag: 'l2', variation: 'on' }]),
      l2: dependent([{ flag: 'l3', variation: 'on' }]),
      l3: dependent([{ flag: 'l4', variation: 'on' }]),
      l4: onFlag({ enabled: false }),
    };
    pre('nested four deep: the deepest off turns the top off', dependent([{ flag: 'l1', variation: 'on' }]), deep, {}, failed('l1'));
    // Diamond: both sides require the same flag.
    pre(
      'diamond: both sides on',
      dependent([
        { flag: 'left', variation: 'on' },
        { flag: 'right', variation: 'on' },
      ]),
      { left: dependent([{ flag: 'root', variation: 'on' }]), right: dependent([{ flag: 'root', variation: 'on' }]), root: onFlag() },
      {},
      passed,
    );
  }
  {
    // A prerequisite on a variant: the dependent follows the arm of an experiment.
    const key = 'experiment';
    const experiment = onFlag({ variants: ab });
    const inTreatment = userWhere(key, (_b, v) => v >= 5000);
    const inControl = userWhere(key, (_b, v) => v < 5000);
    const f = dependent([{ flag: key, variation: 'treatment' }]);
    pre('on a variant: a user in that variant passes', f, { [key]: experiment }, { userId: inTreatment.userId }, passed);
    pre('on a variant: a user in the other variant fails', f, { [key]: experiment }, { userId: inControl.userId }, failed(key));
    pre(
      'on a variant: without userId the first weighted variant is what the prerequisite serves',
      dependent([{ flag: key, variation: 'control' }]),
      { [key]: experiment },
      {},
      passed,
    );
    pre(
      'on a variant: a killed experiment serves off, so its dependant fails',
      f,
      { [key]: experiment },
      { userId: inTreatment.userId },
      failed(key),
      [key],
    );
    const named = onFlag({
      variants: ab,
      rules: [{ id: 'vip', conditions: [{ attribute: 'vip', op: 'eq', value: true }], serve: 'treatment' }],
    });
    pre('on a variant named by a rule', f, { [key]: named }, { userId: inControl.userId, attributes: { vip: true } }, passed);
  }
  {
    // The dependent itself with variants: a met prerequisite, then its own variant.
    const key = 'dependent';
    const f = dependent([{ flag: 'base', variation: 'on' }], { variants: ab });
    const u = userWhere(key, (_b, v) => v >= 5000);
    pre(
      'a dependent with variants serves its variant once its prerequisites are met',
      f,
      { base: onFlag() },
      { userId: u.userId },
      served(ab[1], 'default', { variantBucket: u.variantBucket }),
    );
    pre('a dependent with variants serves valueOff when a prerequisite fails', f, { base: flag() }, { userId: u.userId }, failed('base'));
  }
}
