#!/usr/bin/env node
// Writes test/vectors/evaluation.json: the evaluation cases (docs/evaluation.md) that the core, the
// evaluation server and every SDK run. Expectations are written by hand here; buckets come from
// murmurhash-js over the UTF-8 bytes, never from @flagops/core, so the vectors check that code
// rather than echo it. Run: node scripts/vectors/evaluation.mjs
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import murmurhash from 'murmurhash-js';

/** Reference bucket: murmurhash-js wants a byte string, so feed it the UTF-8 bytes one per char. */
export function referenceBucket(flagKey, userId) {
  const bytes = new TextEncoder().encode(`${flagKey}/${userId}`);
  return (murmurhash.murmur3(String.fromCharCode(...bytes), 0) % 10000) / 100;
}

const ON = 'blue';
const OFF = 'grey';
const DEFAULT = 'legacy';

function flag(overrides = {}) {
  return {
    enabled: true,
    rolloutPct: 0,
    valueOn: ON,
    valueOff: OFF,
    rules: [],
    killed: false,
    archived: false,
    defaultValue: DEFAULT,
    ...overrides,
  };
}

const served = {
  killed: { value: OFF, reason: 'killed', variation: 'off' },
  archived: { value: DEFAULT, reason: 'archived', variation: 'default' },
  disabled: { value: OFF, reason: 'flag_disabled', variation: 'off' },
  defaultOn: { value: ON, reason: 'default', variation: 'on' },
  defaultOff: { value: OFF, reason: 'default', variation: 'off' },
  rolloutOffNoUser: { value: OFF, reason: 'rollout', variation: 'off' },
};
const ruleOn = (ruleId, bucket) => ({
  value: ON,
  reason: 'rule_match',
  variation: 'on',
  ruleId,
  ...(bucket === undefined ? {} : { bucket }),
});
const ruleOff = (ruleId, bucket) => ({
  value: OFF,
  reason: 'rule_match',
  variation: 'off',
  ruleId,
  ...(bucket === undefined ? {} : { bucket }),
});
const rollout = (on, bucket) => ({ value: on ? ON : OFF, reason: 'rollout', variation: on ? 'on' : 'off', bucket });

const cases = [];
function add(name, flagKey, flagConfig, context, expected, killedKeys) {
  cases.push({ name, flagKey, flag: flagConfig, context, ...(killedKeys ? { killedKeys } : {}), expected });
}

// ---- Operators: one rule with one condition, serve on; the flag otherwise serves valueOff at 0%. ----
function condition(name, cond, context, holds) {
  const f = flag({ rules: [{ id: 'r1', conditions: [cond], serve: 'on' }] });
  add(`${cond.op}: ${name}`, 'op-flag', f, context, holds ? ruleOn('r1') : served.defaultOff);
}
const attrs = (attributes) => ({ userId: 'user-1', attributes });

const eq = (value) => ({ attribute: 'a', op: 'eq', value });
condition('equal strings hold', eq('DE'), attrs({ a: 'DE' }), true);
condition('different strings fail', eq('DE'), attrs({ a: 'FR' }), false);
condition('comparison is case-sensitive', eq('DE'), attrs({ a: 'de' }), false);
condition('equal numbers hold', eq(3), attrs({ a: 3 }), true);
condition('1 and 1.0 are the same JSON number', eq(1), attrs({ a: 1.0 }), true);
condition('a numeric string is not the number', eq(3), attrs({ a: '3' }), false);
condition('the number is not a numeric string', eq('3'), attrs({ a: 3 }), false);
condition('equal booleans hold', eq(true), attrs({ a: true }), true);
condition('false is not 0', eq(false), attrs({ a: 0 }), false);
condition('null equals null', eq(null), attrs({ a: null }), true);
condition('missing attribute fails', eq('DE'), attrs({ b: 'DE' }), false);
condition('missing attributes object fails', eq('DE'), { userId: 'user-1' }, false);
condition('array attribute fails (not a scalar)', eq('DE'), attrs({ a: ['DE'] }), false);
condition('object attribute fails (not a scalar)', eq('DE'), attrs({ a: { v: 'DE' } }), false);
condition('non-scalar value never holds', eq(['DE']), attrs({ a: ['DE'] }), false);

const neq = (value) => ({ attribute: 'a', op: 'neq', value });
condition('different strings hold', neq('DE'), attrs({ a: 'FR' }), true);
condition('equal strings fail', neq('DE'), attrs({ a: 'DE' }), false);
condition('string vs number of other type holds', neq(3), attrs({ a: '3' }), true);
condition('null attribute is a value, differs from a string', neq('DE'), attrs({ a: null }), true);
condition('missing attribute fails', neq('DE'), attrs({}), false);
condition('array attribute fails closed', neq('DE'), attrs({ a: ['FR'] }), false);
condition('object attribute fails closed', neq('DE'), attrs({ a: { v: 'FR' } }), false);

const inList = (value) => ({ attribute: 'country', op: 'in', value });
const twelve = ['AT', 'BE', 'CH', 'DE', 'DK', 'ES', 'FI', 'FR', 'IE', 'IT', 'NL', 'SE'];
condition('member holds', inList(['DE', 'FR']), attrs({ country: 'FR' }), true);
condition('non-member fails', inList(['DE', 'FR']), attrs({ country: 'US' }), false);
condition('member of a long list holds', inList(twelve), attrs({ country: 'SE' }), true);
condition('non-member of a long list fails', inList(twelve), attrs({ country: 'US' }), false);
condition('number member holds', inList([1, 2, 3]), attrs({ country: 2 }), true);
condition('numeric string is not a number member', inList([1, 2, 3]), attrs({ country: '2' }), false);
condition('empty list fails', inList([]), attrs({ country: 'DE' }), false);
condition('missing attribute fails', inList(['DE']), attrs({}), false);
condition('array attribute fails', inList(['DE']), attrs({ country: ['DE'] }), false);
condition('non-array value never holds', inList('DE'), attrs({ country: 'DE' }), false);

const notIn = (value) => ({ attribute: 'country', op: 'not_in', value });
condition('non-member holds', notIn(['DE', 'FR']), attrs({ country: 'US' }), true);
condition('member fails', notIn(['DE', 'FR']), attrs({ country: 'DE' }), false);
condition('non-member of a long list holds', notIn(twelve), attrs({ country: 'US' }), true);
condition('member of a long list fails', notIn(twelve), attrs({ country: 'IT' }), false);
condition('empty list holds for any scalar', notIn([]), attrs({ country: 'DE' }), true);
condition('missing attribute fails', notIn(['DE']), attrs({}), false);
condition('array attribute fails closed', notIn(['DE']), attrs({ country: ['US'] }), false);
condition('non-array value never holds', notIn('DE'), attrs({ country: 'US' }), false);

const contains = (value) => ({ attribute: 'a', op: 'contains', value });
condition('substring holds', contains('@example.com'), attrs({ a: 'ana@example.com' }), true);
condition('absent substring fails', contains('@example.com'), attrs({ a: 'ana@example.org' }), false);
condition('substring match is case-sensitive', contains('Beta'), attrs({ a: 'beta-tester' }), false);
condition('array attribute with the member holds', contains('beta'), attrs({ a: ['alpha', 'beta'] }), true);
condition('array attribute without the member fails', contains('beta'), attrs({ a: ['alpha', 'betamax'] }), false);
condition('array attribute with a number member holds', contains(2), attrs({ a: [1, 2] }), true);
condition('array members compare strictly', contains(2), attrs({ a: ['2'] }), false);
condition('number attribute fails', contains('1'), attrs({ a: 12 }), false);
condition('string attribute with a number value fails', contains(5), attrs({ a: 'a5' }), false);
condition('missing attribute fails', contains('x'), attrs({}), false);

const num = (op, value) => ({ attribute: 'age', op, value });
condition('greater holds', num('gt', 18), attrs({ age: 21 }), true);
condition('equal fails', num('gt', 18), attrs({ age: 18 }), false);
condition('fractions compare', num('gt', 1.5), attrs({ age: 1.51 }), true);
condition('negative numbers compare', num('gt', -1), attrs({ age: -2 }), false);
condition('numeric string fails (no coercion)', num('gt', 18), attrs({ age: '21' }), false);
condition('boolean fails', num('gt', 0), attrs({ age: true }), false);
condition('missing attribute fails', num('gt', 18), attrs({}), false);
condition('string value never holds', num('gt', '18'), attrs({ age: 21 }), false);
condition('equal holds', num('gte', 18), attrs({ age: 18 }), true);
condition('smaller fails', num('gte', 18), attrs({ age: 17.99 }), false);
condition('null fails', num('gte', 0), attrs({ age: null }), false);
condition('smaller holds', num('lt', 18), attrs({ age: 17 }), true);
condition('equal fails', num('lt', 18), attrs({ age: 18 }), false);
condition('numeric string fails (no coercion)', num('lt', 18), attrs({ age: '1' }), false);
condition('equal holds', num('lte', 18), attrs({ age: 18 }), true);
condition('greater fails', num('lte', 18), attrs({ age: 18.5 }), false);
condition('missing attribute fails', num('lte', 18), attrs({}), false);

const sv = (op, value) => ({ attribute: 'appVersion', op, value });
condition('same version holds', sv('semver_eq', '1.2.3'), attrs({ appVersion: '1.2.3' }), true);
condition('build metadata is ignored', sv('semver_eq', '1.2.3'), attrs({ appVersion: '1.2.3+build.7' }), true);
condition('a prerelease is not the release', sv('semver_eq', '1.2.3'), attrs({ appVersion: '1.2.3-beta' }), false);
condition('leading "v" is not a semantic version', sv('semver_eq', '1.2.3'), attrs({ appVersion: 'v1.2.3' }), false);
condition('two-part version is invalid', sv('semver_eq', '1.2.0'), attrs({ appVersion: '1.2' }), false);
condition('number attribute fails', sv('semver_eq', '1.0.0'), attrs({ appVersion: 1 }), false);
condition('missing attribute fails', sv('semver_eq', '1.2.3'), attrs({}), false);
condition('newer minor holds', sv('semver_gt', '2.0.0'), attrs({ appVersion: '2.1.0' }), true);
condition('same version fails', sv('semver_gt', '2.0.0'), attrs({ appVersion: '2.0.0' }), false);
condition('numbers compare numerically, not as text', sv('semver_gt', '9.0.0'), attrs({ appVersion: '10.0.0' }), true);
condition('a release is greater than its prerelease', sv('semver_gt', '2.0.0-rc.1'), attrs({ appVersion: '2.0.0' }), true);
condition(
  'numeric prerelease identifiers compare numerically',
  sv('semver_gt', '1.0.0-beta.2'),
  attrs({ appVersion: '1.0.0-beta.11' }),
  true,
);
condition(
  'alphanumeric identifiers outrank numeric ones',
  sv('semver_gt', '1.0.0-alpha.1'),
  attrs({ appVersion: '1.0.0-alpha.beta' }),
  true,
);
condition('more prerelease fields outrank fewer', sv('semver_gt', '1.0.0-alpha'), attrs({ appVersion: '1.0.0-alpha.1' }), true);
condition('prerelease identifiers compare in ASCII order', sv('semver_gt', '1.0.0-beta'), attrs({ appVersion: '1.0.0-alpha' }), false);
condition('leading zero makes the version invalid', sv('semver_gt', '1.0.0'), attrs({ appVersion: '01.2.0' }), false);
condition('surrounding spaces make it invalid', sv('semver_gt', '1.0.0'), attrs({ appVersion: ' 2.0.0' }), false);
condition('a word is not a version', sv('semver_gt', '1.0.0'), attrs({ appVersion: 'latest' }), false);
condition('missing attribute fails', sv('semver_gt', '1.0.0'), attrs({}), false);
condition('invalid condition value never holds', sv('semver_gt', 'v1.0.0'), attrs({ appVersion: '2.0.0' }), false);
condition('older version holds', sv('semver_lt', '2.0.0'), attrs({ appVersion: '1.9.9' }), true);
condition('a prerelease precedes its release', sv('semver_lt', '2.0.0'), attrs({ appVersion: '2.0.0-alpha' }), true);
condition('same version fails', sv('semver_lt', '2.0.0'), attrs({ appVersion: '2.0.0' }), false);
condition('build metadata does not order versions', sv('semver_lt', '2.0.0+b.2'), attrs({ appVersion: '2.0.0+b.1' }), false);
condition('invalid attribute fails', sv('semver_lt', '2.0.0'), attrs({ appVersion: '1.0' }), false);

condition('unknown operator never holds', { attribute: 'a', op: 'regex', value: '.*' }, attrs({ a: 'x' }), false);
condition('unknown operator fails even when the attribute is missing', { attribute: 'a', op: 'not_equals', value: 'x' }, attrs({}), false);

condition('userId resolves to context.userId', { attribute: 'userId', op: 'eq', value: 'user-1' }, { userId: 'user-1' }, true);
condition(
  'userId falls back to attributes.userId',
  { attribute: 'userId', op: 'eq', value: 'user-9' },
  { attributes: { userId: 'user-9' } },
  true,
);
condition(
  'context.userId wins over attributes.userId',
  { attribute: 'userId', op: 'eq', value: 'user-9' },
  { userId: 'user-1', attributes: { userId: 'user-9' } },
  false,
);
condition('userId in a list', { attribute: 'userId', op: 'in', value: ['user-1', 'user-2'] }, { userId: 'user-2' }, true);
condition('inherited property "constructor" is missing', { attribute: 'constructor', op: 'neq', value: 'x' }, attrs({}), false);

// ---- Rules: all conditions, none, order. ----
const twoConds = [
  { attribute: 'country', op: 'in', value: ['DE', 'FR'] },
  { attribute: 'appVersion', op: 'semver_gt', value: '2.0.0' },
];
const rule2 = (extra = {}) => flag({ rules: [{ id: 'eu-new', conditions: twoConds, serve: 'on', ...extra }] });
add('rule: all conditions hold', 'rules', rule2(), attrs({ country: 'DE', appVersion: '2.4.1' }), ruleOn('eu-new'));
add('rule: one failing condition fails the rule', 'rules', rule2(), attrs({ country: 'DE', appVersion: '1.9.0' }), served.defaultOff);
add('rule: one missing attribute fails the rule', 'rules', rule2(), attrs({ country: 'FR' }), served.defaultOff);
add('rule: without conditions always matches', 'rules', flag({ rules: [{ id: 'all', conditions: [], serve: 'on' }] }), {}, ruleOn('all'));
add(
  'rule: serve off serves valueOff',
  'rules',
  flag({ rolloutPct: 100, rules: [{ id: 'deny', conditions: [eq('x')], serve: 'off' }] }),
  attrs({ a: 'x' }),
  ruleOff('deny'),
);
const ordered = flag({
  rolloutPct: 100,
  rules: [
    { id: 'first', conditions: [{ attribute: 'plan', op: 'eq', value: 'free' }], serve: 'off' },
    { id: 'second', conditions: [{ attribute: 'country', op: 'eq', value: 'DE' }], serve: 'on' },
    { id: 'third', conditions: [], serve: 'off' },
  ],
});
add('order: the first matching rule wins', 'ordered', ordered, attrs({ plan: 'free', country: 'DE' }), ruleOff('first'));
add(
  'order: a later rule applies when earlier ones do not match',
  'ordered',
  ordered,
  attrs({ plan: 'pro', country: 'DE' }),
  ruleOn('second'),
);
add('order: the catch-all rule serves before the rollout', 'ordered', ordered, attrs({ plan: 'pro', country: 'US' }), ruleOff('third'));

// ---- Rule rollout: pick users on either side of the rule's percentage with the reference bucket. ----
function userWith(flagKey, predicate, from = 0) {
  for (let i = from; ; i++) {
    const userId = `user-${i}`;
    const b = referenceBucket(flagKey, userId);
    if (predicate(b)) return { userId, b };
  }
}
{
  const key = 'rule-rollout';
  const f = flag({ rules: [{ id: 'eu-new', conditions: twoConds, serve: 'on', rolloutPct: 30 }] });
  const matching = { country: 'FR', appVersion: '3.0.0' };
  const inside = userWith(key, (b) => b < 30);
  const outside = userWith(key, (b) => b >= 30);
  add(
    'rule rollout: bucket below rolloutPct applies the rule, with bucket',
    key,
    f,
    { userId: inside.userId, attributes: matching },
    ruleOn('eu-new', inside.b),
  );
  add(
    'rule rollout: bucket at or above rolloutPct skips the rule',
    key,
    f,
    { userId: outside.userId, attributes: matching },
    served.defaultOff,
  );
  add('rule rollout: no userId skips the rule', key, f, { attributes: matching }, served.defaultOff);
  add('rule rollout: empty userId counts as no userId', key, f, { userId: '', attributes: matching }, served.defaultOff);
  add(
    'rule rollout: conditions still decide first',
    key,
    f,
    { userId: inside.userId, attributes: { ...matching, country: 'US' } },
    served.defaultOff,
  );

  const edge = userWith(key, (b) => b > 1 && b < 99);
  const at = flag({ rules: [{ id: 'edge', conditions: [], serve: 'on', rolloutPct: edge.b }] });
  add('rule rollout: bucket equal to rolloutPct does not apply', key, at, { userId: edge.userId }, served.defaultOff);
  const above = flag({ rules: [{ id: 'edge', conditions: [], serve: 'on', rolloutPct: Math.round(edge.b * 100 + 1) / 100 }] });
  add('rule rollout: bucket 0.01 below rolloutPct applies', key, above, { userId: edge.userId }, ruleOn('edge', edge.b));

  const full = flag({ rules: [{ id: 'all', conditions: [], serve: 'off', rolloutPct: 100 }], rolloutPct: 100 });
  add('rule rollout 100: applies to every user, reporting the bucket', key, full, { userId: edge.userId }, ruleOff('all', edge.b));
  add('rule rollout 100: still needs a userId', key, full, {}, served.defaultOn);
  const none = flag({ rules: [{ id: 'none', conditions: [], serve: 'on', rolloutPct: 0 }] });
  add('rule rollout 0: never applies', key, none, { userId: edge.userId }, served.defaultOff);

  const chain = flag({
    rolloutPct: 100,
    rules: [
      { id: 'canary', conditions: [], serve: 'off', rolloutPct: 10 },
      { id: 'everyone', conditions: [], serve: 'on' },
    ],
  });
  const notCanary = userWith(key, (b) => b >= 10);
  add(
    'rule rollout: a skipped rule falls through to the next rule (no bucket reported)',
    key,
    chain,
    { userId: notCanary.userId },
    ruleOn('everyone'),
  );
  add('rule rollout: without userId the next rule applies', key, chain, {}, ruleOn('everyone'));
  const canary = userWith(key, (b) => b < 10);
  add('rule rollout: a canary user gets the first rule', key, chain, { userId: canary.userId }, ruleOff('canary', canary.b));

  const thenRollout = flag({ rolloutPct: 50, rules: [{ id: 'tiny', conditions: [], serve: 'on', rolloutPct: 5 }] });
  const mid = userWith(key, (b) => b >= 5 && b < 50);
  add('rule rollout then flag rollout: the same bucket decides both', key, thenRollout, { userId: mid.userId }, rollout(true, mid.b));
}

// ---- Flag rollout (step 5 of the evaluation order, docs/evaluation.md). ----
{
  const key = 'checkout-v2';
  const u = userWith(key, (b) => b > 1 && b < 99, 100);
  add('rollout 100: serves valueOn, reason default, no bucket', key, flag({ rolloutPct: 100 }), { userId: u.userId }, served.defaultOn);
  add('rollout 100 without userId: serves valueOn', key, flag({ rolloutPct: 100 }), {}, served.defaultOn);
  add('rollout 0: serves valueOff, reason default, no bucket', key, flag({ rolloutPct: 0 }), { userId: u.userId }, served.defaultOff);
  add('rollout 0 without userId: serves valueOff', key, flag({ rolloutPct: 0 }), {}, served.defaultOff);
  add('rollout between, no userId: valueOff, reason rollout, no bucket', key, flag({ rolloutPct: 50 }), {}, served.rolloutOffNoUser);
  add('rollout between, empty userId: as no userId', key, flag({ rolloutPct: 50 }), { userId: '' }, served.rolloutOffNoUser);
  add('rollout: bucket equal to rolloutPct serves valueOff', key, flag({ rolloutPct: u.b }), { userId: u.userId }, rollout(false, u.b));
  add(
    'rollout: bucket just below rolloutPct serves valueOn',
    key,
    flag({ rolloutPct: Math.round(u.b * 100 + 1) / 100 }),
    { userId: u.userId },
    rollout(true, u.b),
  );
  add(
    'rollout: bucket just above rolloutPct serves valueOff',
    key,
    flag({ rolloutPct: Math.round(u.b * 100 - 1) / 100 }),
    { userId: u.userId },
    rollout(false, u.b),
  );
  const low = userWith(key, (b) => b < 0.5);
  add('rollout 0.5: a user in the lowest buckets is on', key, flag({ rolloutPct: 0.5 }), { userId: low.userId }, rollout(true, low.b));
  const high = userWith(key, (b) => b >= 99.5);
  add(
    'rollout 99.5: a user in the highest buckets is off',
    key,
    flag({ rolloutPct: 99.5 }),
    { userId: high.userId },
    rollout(false, high.b),
  );
  for (let i = 0; i < 12; i++) {
    const userId = `acct-${(i * 7919) % 10007}`;
    const b = referenceBucket(key, userId);
    add(`rollout 30: ${userId} lands in bucket ${b}`, key, flag({ rolloutPct: 30 }), { userId }, rollout(b < 30, b));
  }
}

// ---- Unicode keys and user ids: the bucket is over UTF-8 bytes. ----
{
  const pairs = [
    ['café-banner', 'user-1'],
    ['checkout', 'josé'],
    ['checkout', 'zoë@example.com'],
    ['日本-launch', 'ユーザー42'],
    ['checkout', '日本'],
    ['emoji-🚀', 'user-1'],
    ['checkout', '👩‍💻-dev'],
    ['checkout', '🎉'],
    ['ключ', 'пользователь'],
    ['checkout', 'a𝒳b'],
    ['ß', 'Ⅻ'],
    ['mixed', 'e\u0301'],
  ];
  for (const [key, userId] of pairs) {
    const b = referenceBucket(key, userId);
    add(`unicode bucketing: ${key} / ${userId} → bucket ${b}`, key, flag({ rolloutPct: 50 }), { userId }, rollout(b < 50, b));
  }
}

// ---- Steps 1–3 of the evaluation order, and unknown keys. ----
{
  const everything = { rolloutPct: 100, rules: [{ id: 'all', conditions: [], serve: 'on' }] };
  add('killed: serves valueOff even when a rule matches', 'k', flag({ ...everything, killed: true }), { userId: 'u' }, served.killed);
  add('killed: beats archived', 'k', flag({ killed: true, archived: true }), {}, served.killed);
  add('killed: beats disabled', 'k', flag({ killed: true, enabled: false }), {}, served.killed);
  add(
    'killed: serves a JSON valueOff',
    'k',
    flag({ killed: true, valueOff: { theme: 'dark', n: [1, 2] } }),
    {},
    { value: { theme: 'dark', n: [1, 2] }, reason: 'killed', variation: 'off' },
  );
  add('kill overlay: a listed key is killed though the snapshot says not', 'k', flag(everything), { userId: 'u' }, served.killed, ['k']);
  add(
    'kill overlay: an unlisted key is not killed though the snapshot says killed',
    'k',
    flag({ ...everything, killed: true }),
    { userId: 'u' },
    ruleOn('all'),
    ['other'],
  );
  add('kill overlay: an empty overlay means nothing is killed', 'k', flag({ ...everything, killed: true }), {}, ruleOn('all'), []);
  add(
    'archived: serves defaultValue even when a rule matches',
    'a',
    flag({ ...everything, archived: true }),
    { userId: 'u' },
    served.archived,
  );
  add('archived: beats disabled', 'a', flag({ archived: true, enabled: false }), {}, served.archived);
  add(
    'archived: defaultValue null serves null',
    'a',
    flag({ archived: true, defaultValue: null }),
    {},
    { value: null, reason: 'archived', variation: 'default' },
  );
  add(
    'archived: a false defaultValue is served as false',
    'a',
    flag({ archived: true, valueOn: true, valueOff: false, defaultValue: false }),
    {},
    { value: false, reason: 'archived', variation: 'default' },
  );
  add(
    'disabled: serves valueOff even when a rule matches and rollout is 100',
    'd',
    flag({ ...everything, enabled: false }),
    { userId: 'u' },
    served.disabled,
  );
  add(
    'disabled: serves a numeric valueOff',
    'd',
    flag({ enabled: false, valueOn: 10, valueOff: 0 }),
    {},
    { value: 0, reason: 'flag_disabled', variation: 'off' },
  );
  add(
    'unknown flag key: value null, reason flag_not_found',
    'no-such-flag',
    null,
    { userId: 'u' },
    { value: null, reason: 'flag_not_found' },
  );
  add('unknown flag key: even when the overlay lists it', 'no-such-flag', null, {}, { value: null, reason: 'flag_not_found' }, [
    'no-such-flag',
  ]);
  add(
    'boolean flag: rule serves true',
    'bool',
    flag({ valueOn: true, valueOff: false, rules: [{ id: 'r', conditions: [], serve: 'on' }] }),
    {},
    { value: true, reason: 'rule_match', variation: 'on', ruleId: 'r' },
  );
  add(
    'json flag: rollout 100 serves the JSON valueOn',
    'json',
    flag({ rolloutPct: 100, valueOn: { limit: 5, tags: ['a'] }, valueOff: {} }),
    {},
    { value: { limit: 5, tags: ['a'] }, reason: 'default', variation: 'on' },
  );
}

export const vectors = {
  about: 'Evaluation cases (docs/evaluation.md) shared by the core, the evaluation server and the SDKs. See README.md beside this file.',
  cases,
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const names = new Set(cases.map((c) => c.name));
  if (names.size !== cases.length) throw new Error('vector names must be unique');
  const out = new URL('../../test/vectors/evaluation.json', import.meta.url);
  writeFileSync(out, JSON.stringify(vectors, null, 2) + '\n');
  console.log(`wrote ${cases.length} cases to ${fileURLToPath(out)}`);
}
