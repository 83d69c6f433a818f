import { compileEnvironment, explainEvaluation, flagMetadata, openFeatureReason, type SnapshotFlag } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { flag, referenceVariantBucket } from './support.js';

const on = (extra: Partial<SnapshotFlag> = {}) => flag({ rolloutPct: 100, ...extra });
const requires = (key: string, variation = 'on') => ({ flag: key, variation });
const AB = [
  { name: 'control', value: 'blue', weight: 50 },
  { name: 'treatment', value: 'green', weight: 50 },
];

describe('prerequisites in a snapshot the repository would refuse', () => {
  it('a cycle terminates: the prerequisite that closes it fails', () => {
    const env = compileEnvironment({ a: on({ prerequisites: [requires('b')] }), b: on({ prerequisites: [requires('a')] }) });
    expect(env.evaluate('a', {})).toEqual({ value: 'grey', reason: 'prerequisite_failed', variation: 'off', prerequisiteKey: 'b' });
    expect(env.evaluate('b', {})).toMatchObject({ reason: 'prerequisite_failed' });
  });

  it('a flag requiring itself fails', () => {
    const env = compileEnvironment({ a: on({ prerequisites: [requires('a')] }) });
    expect(env.evaluate('a', {})).toMatchObject({ reason: 'prerequisite_failed', prerequisiteKey: 'a' });
  });

  it('a wide diamond 20 levels deep is evaluated once per flag (it would take 16^20 steps otherwise)', () => {
    const flags: Record<string, SnapshotFlag> = { 'level-20-0': on() };
    for (let level = 19; level >= 0; level--)
      for (let i = 0; i < 16; i++)
        flags[`level-${level}-${i}`] = on({
          prerequisites: Array.from({ length: 16 }, (_, j) => requires(level === 19 ? 'level-20-0' : `level-${level + 1}-${j}`)),
        });
    const env = compileEnvironment(flags);
    expect(env.evaluate('level-0-0', { userId: 'u' })).toEqual({ value: 'blue', reason: 'default', variation: 'on' });
  });
});

describe('the variant bucket', () => {
  it('is a number with at most two decimals, from murmur3 of <flagKey>/variant/<userId>', () => {
    const env = compileEnvironment({ exp: on({ variants: AB }) });
    for (const userId of ['a', 'user-1', 'Zoë', '🙂']) {
      const result = env.evaluate('exp', { userId });
      expect(result.variantBucket).toBe(referenceVariantBucket('exp', userId));
      expect(result.variation).toBe(result.variantBucket! < 50 ? 'control' : 'treatment');
    }
  });

  it('splits users close to the weights', () => {
    const env = compileEnvironment({
      exp: on({
        variants: [
          { name: 'a', value: 'a', weight: 10 },
          { name: 'b', value: 'b', weight: 30 },
          { name: 'c', value: 'c', weight: 60 },
        ],
      }),
    });
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 20_000; i++) counts[env.evaluate('exp', { userId: `user-${i}` }).variation as string]++;
    expect(counts.a / 20_000).toBeCloseTo(0.1, 1);
    expect(counts.b / 20_000).toBeCloseTo(0.3, 1);
    expect(counts.c / 20_000).toBeCloseTo(0.6, 1);
  });
});

describe('explainEvaluation', () => {
  it('names the failed prerequisite and what it served', () => {
    const explanation = explainEvaluation(on({ prerequisites: [requires('base')] }), 'dependent', {}, undefined, {
      flags: { base: flag({ enabled: false }) },
    });
    expect(explanation.result).toEqual({ value: 'grey', reason: 'prerequisite_failed', variation: 'off', prerequisiteKey: 'base' });
    expect(explanation.steps.at(-1)).toEqual({
      step: 'prerequisites',
      outcome: 'prerequisite base serves off (reason flag_disabled), not on: serves valueOff',
      prerequisites: [{ flag: 'base', variation: 'on', served: 'off', reason: 'flag_disabled', holds: false }],
    });
  });

  it('a prerequisite killed by the overlay is explained as killed', () => {
    const explanation = explainEvaluation(on({ prerequisites: [requires('base')] }), 'dependent', {}, false, {
      flags: { base: on() },
      killedKeys: ['base'],
    });
    expect(explanation.steps.at(-1)!.prerequisites).toEqual([
      { flag: 'base', variation: 'on', served: 'off', reason: 'killed', holds: false },
    ]);
  });

  it('shows segment membership: listed, and the segment conditions with their values', () => {
    const rules = [{ id: 'seg', serve: 'on', conditions: [{ op: 'in_segment' as const, value: 'beta' }] }];
    const segments = { beta: { userIds: ['ana'], conditions: [{ attribute: 'plan', op: 'eq' as const, value: 'beta' }] } };
    const listed = explainEvaluation(flag({ rules }), 'f', { userId: 'ana' }, undefined, { segments });
    expect(listed.result).toMatchObject({ reason: 'rule_match', ruleId: 'seg' });
    expect(listed.steps.at(-1)!.conditions).toEqual([
      {
        op: 'in_segment',
        value: 'beta',
        actual: undefined,
        holds: true,
        segment: {
          key: 'beta',
          exists: true,
          member: true,
          listed: true,
          conditions: [{ attribute: 'plan', op: 'eq', value: 'beta', actual: undefined, holds: false }],
        },
      },
    ]);
    const unknown = explainEvaluation(flag({ rules }), 'f', { userId: 'ana' }, undefined, {});
    expect(unknown.steps.at(-2)!.conditions![0].segment).toEqual({
      key: 'beta',
      exists: false,
      member: false,
      listed: false,
      conditions: [],
    });
  });

  it('shows the variant bucket and the range of each variant', () => {
    const explanation = explainEvaluation(on({ variants: AB }), 'exp', { userId: 'user-1' });
    const variantBucket = referenceVariantBucket('exp', 'user-1');
    const chosen = variantBucket < 50 ? 'control' : 'treatment';
    expect(explanation.steps.at(-1)).toEqual({
      step: 'rollout',
      outcome: `rolloutPct 100: serves a variant; variant bucket ${variantBucket} is in [${chosen === 'control' ? '0, 50' : '50, 100'}): variant ${chosen}`,
      variant: {
        variantBucket,
        ranges: [
          { name: 'control', from: 0, to: 50 },
          { name: 'treatment', from: 50, to: 100 },
        ],
        chosen,
      },
    });
  });
});

describe('OpenFeature', () => {
  it('reports a failed prerequisite as DISABLED, with the prerequisite and the variant bucket in the metadata', () => {
    expect(openFeatureReason('prerequisite_failed')).toBe('DISABLED');
    expect(flagMetadata({ reason: 'prerequisite_failed', prerequisiteKey: 'base' })).toEqual({
      flagopsReason: 'prerequisite_failed',
      prerequisiteKey: 'base',
    });
    expect(flagMetadata({ reason: 'rollout', bucket: 3, variantBucket: 71.5 })).toEqual({
      flagopsReason: 'rollout',
      bucket: 3,
      variantBucket: 71.5,
    });
  });
});
