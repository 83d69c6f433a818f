import { compileEnvironment, type Rule } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { evaluateOne, findUser, flag } from './support.js';

const always = (id: string, serve: 'on' | 'off', rolloutPct?: number): Rule =>
  rolloutPct === undefined ? { id, conditions: [], serve } : { id, conditions: [], serve, rolloutPct };
const matchingEverything = { rolloutPct: 100, rules: [always('all', 'on')] };

describe('the evaluation order', () => {
  describe('a killed flag (step 1)', () => {
    it('serves valueOff, variation off, reason killed, even when a rule matches and rollout is 100', () => {
      expect(evaluateOne(flag({ ...matchingEverything, killed: true }), { userId: 'u' })).toStrictEqual({
        value: 'grey',
        reason: 'killed',
        variation: 'off',
      });
    });
    it('is killed before it is archived or disabled', () => {
      expect(evaluateOne(flag({ killed: true, archived: true, enabled: false }), {}).reason).toBe('killed');
    });
  });

  describe('the kill overlay (killedKeys)', () => {
    it('kills a listed flag whose snapshot entry says not killed', () => {
      expect(evaluateOne(flag(matchingEverything), { userId: 'u' }, new Set(['f'])).reason).toBe('killed');
    });
    it('alone decides when given: a flag it does not list is not killed, whatever the snapshot says', () => {
      expect(evaluateOne(flag({ ...matchingEverything, killed: true }), { userId: 'u' }, new Set(['other'])).reason).toBe('rule_match');
      expect(evaluateOne(flag({ ...matchingEverything, killed: true }), {}, new Set()).reason).toBe('rule_match');
    });
    it('is checked per evaluation, so swapping it needs no recompilation', () => {
      const env = compileEnvironment({ f: flag(matchingEverything) });
      const kills = new Set<string>();
      expect(env.evaluate('f', {}, kills).reason).toBe('rule_match');
      kills.add('f');
      expect(env.evaluate('f', {}, kills).reason).toBe('killed');
    });
  });

  describe('an archived flag (step 2)', () => {
    it('serves defaultValue with variation default, even when a rule matches', () => {
      expect(evaluateOne(flag({ ...matchingEverything, archived: true }), { userId: 'u' })).toStrictEqual({
        value: 'legacy',
        reason: 'archived',
        variation: 'default',
      });
    });
    it('serves null when the flag has no defaultValue', () => {
      const { defaultValue: _, ...withoutDefault } = flag({ archived: true });
      expect(evaluateOne(withoutDefault as never, {}).value).toBeNull();
    });
    it('is archived before it is disabled', () => {
      expect(evaluateOne(flag({ archived: true, enabled: false }), {}).reason).toBe('archived');
    });
  });

  describe('a disabled flag (step 3)', () => {
    it('serves valueOff, variation off, reason flag_disabled, even when a rule matches and rollout is 100', () => {
      expect(evaluateOne(flag({ ...matchingEverything, enabled: false }), { userId: 'u' })).toStrictEqual({
        value: 'grey',
        reason: 'flag_disabled',
        variation: 'off',
      });
    });
  });

  describe('rules (step 4)', () => {
    const country = (id: string, value: string, serve: 'on' | 'off'): Rule => ({
      id,
      conditions: [{ attribute: 'country', op: 'eq', value }],
      serve,
    });

    it('a rule matches when all its conditions hold', () => {
      const rule: Rule = {
        id: 'both',
        serve: 'on',
        conditions: [
          { attribute: 'country', op: 'in', value: ['DE', 'FR'] },
          { attribute: 'plan', op: 'eq', value: 'pro' },
        ],
      };
      expect(evaluateOne(flag({ rules: [rule] }), { attributes: { country: 'DE', plan: 'pro' } }).reason).toBe('rule_match');
      expect(evaluateOne(flag({ rules: [rule] }), { attributes: { country: 'DE', plan: 'free' } }).reason).toBe('default');
    });
    it('a rule without conditions always matches', () => {
      expect(evaluateOne(flag({ rules: [always('all', 'on')] }), {})).toStrictEqual({
        value: 'blue',
        reason: 'rule_match',
        variation: 'on',
        ruleId: 'all',
      });
    });
    it('the first rule that applies decides, in order', () => {
      const f = flag({ rules: [country('de', 'DE', 'off'), always('rest', 'on')] });
      expect(evaluateOne(f, { attributes: { country: 'DE' } })).toStrictEqual({
        value: 'grey',
        reason: 'rule_match',
        variation: 'off',
        ruleId: 'de',
      });
      expect(evaluateOne(f, { attributes: { country: 'FR' } }).ruleId).toBe('rest');
    });
    it('serve off serves valueOff even when the rollout would serve valueOn', () => {
      expect(evaluateOne(flag({ rolloutPct: 100, rules: [always('deny', 'off')] }), {}).value).toBe('grey');
    });

    describe('a rule with rolloutPct', () => {
      it('applies when the bucket is below it, reporting the bucket', () => {
        const { userId, bucket } = findUser('f', (b) => b < 40);
        expect(evaluateOne(flag({ rules: [always('r', 'on', 40)] }), { userId })).toStrictEqual({
          value: 'blue',
          reason: 'rule_match',
          variation: 'on',
          ruleId: 'r',
          bucket,
        });
      });
      it('does not apply when the bucket equals or exceeds it; evaluation moves on', () => {
        const { userId, bucket } = findUser('f', (b) => b >= 40);
        expect(evaluateOne(flag({ rules: [always('r', 'on', 40)] }), { userId }).reason).toBe('default');
        expect(evaluateOne(flag({ rules: [always('r', 'on', bucket)] }), { userId }).reason).toBe('default');
        expect(evaluateOne(flag({ rules: [always('r', 'on', 40), always('next', 'off')] }), { userId })).toStrictEqual({
          value: 'grey',
          reason: 'rule_match',
          variation: 'off',
          ruleId: 'next',
        });
      });
      it('does not apply without a userId, even at 100', () => {
        expect(evaluateOne(flag({ rules: [always('r', 'on', 100)] }), { attributes: {} }).reason).toBe('default');
        expect(evaluateOne(flag({ rules: [always('r', 'on', 100)] }), { userId: '' }).reason).toBe('default');
      });
      it('shares its bucket with the flag rollout', () => {
        const { userId, bucket } = findUser('f', (b) => b >= 10 && b < 60);
        expect(evaluateOne(flag({ rolloutPct: 60, rules: [always('r', 'on', 10)] }), { userId })).toStrictEqual({
          value: 'blue',
          reason: 'rollout',
          variation: 'on',
          bucket,
        });
      });
    });
  });

  describe('the rollout (step 5)', () => {
    const { userId, bucket } = findUser('f', (b) => b > 1 && b < 99);
    it('100 serves valueOn, reason default, no bucket, with or without userId', () => {
      for (const context of [{ userId }, {}])
        expect(evaluateOne(flag({ rolloutPct: 100 }), context)).toStrictEqual({ value: 'blue', reason: 'default', variation: 'on' });
    });
    it('0 serves valueOff, reason default, no bucket, with or without userId', () => {
      for (const context of [{ userId }, {}])
        expect(evaluateOne(flag({ rolloutPct: 0 }), context)).toStrictEqual({ value: 'grey', reason: 'default', variation: 'off' });
    });
    it('in between, serves valueOn when the bucket is below rolloutPct, reason rollout, with bucket', () => {
      expect(evaluateOne(flag({ rolloutPct: bucket + 0.01 }), { userId })).toStrictEqual({
        value: 'blue',
        reason: 'rollout',
        variation: 'on',
        bucket,
      });
    });
    it('in between, serves valueOff when the bucket is not below rolloutPct', () => {
      expect(evaluateOne(flag({ rolloutPct: bucket }), { userId })).toStrictEqual({
        value: 'grey',
        reason: 'rollout',
        variation: 'off',
        bucket,
      });
    });
    it('in between without userId serves valueOff, reason rollout, no bucket', () => {
      expect(evaluateOne(flag({ rolloutPct: 50 }), {})).toStrictEqual({ value: 'grey', reason: 'rollout', variation: 'off' });
    });
    it('treats an empty or non-string userId as no userId', () => {
      expect(evaluateOne(flag({ rolloutPct: 50 }), { userId: '' })).toStrictEqual({ value: 'grey', reason: 'rollout', variation: 'off' });
      expect(evaluateOne(flag({ rolloutPct: 50 }), { userId: 42 as never })).toStrictEqual({
        value: 'grey',
        reason: 'rollout',
        variation: 'off',
      });
    });
    it('serves about rolloutPct percent of many users', () => {
      const env = compileEnvironment({ f: flag({ rolloutPct: 25 }) });
      let served = 0;
      for (let i = 0; i < 20000; i++) if (env.evaluate('f', { userId: `user-${i}` }).value === 'blue') served++;
      expect(served / 20000).toBeGreaterThan(0.24);
      expect(served / 20000).toBeLessThan(0.26);
    });
  });

  describe('an unknown flag key', () => {
    it('answers value null, reason flag_not_found, and nothing else', () => {
      const env = compileEnvironment({ f: flag() });
      expect(env.evaluate('missing', { userId: 'u' })).toStrictEqual({ value: null, reason: 'flag_not_found' });
      expect(env.evaluate('missing', {}, new Set(['missing']))).toStrictEqual({ value: null, reason: 'flag_not_found' });
    });
  });
});

describe('a compiled environment', () => {
  it('lists its flag keys and answers has()', () => {
    const env = compileEnvironment({ a: flag(), b: flag() });
    expect(env.keys).toEqual(['a', 'b']);
    expect(env.has('a')).toBe(true);
    expect(env.has('c')).toBe(false);
  });

  it('is unaffected by later changes to the snapshot it was compiled from', () => {
    const source = flag({
      rolloutPct: 100,
      valueOn: { limit: 5 },
      rules: [{ id: 'r', serve: 'off', conditions: [{ attribute: 'c', op: 'in', value: ['DE'] }] }],
    });
    const env = compileEnvironment({ f: source });
    (source.valueOn as { limit: number }).limit = 99;
    (source.rules[0].conditions[0].value as string[]).push('FR');
    source.enabled = false;
    expect(env.evaluate('f', { attributes: { c: 'FR' } })).toStrictEqual({ value: { limit: 5 }, reason: 'default', variation: 'on' });
  });

  it('hands out values that callers cannot mutate into later results', () => {
    const env = compileEnvironment({ f: flag({ rolloutPct: 100, valueOn: { tags: ['a'] } }) });
    const value = env.evaluate('f', {}).value as { tags: string[] };
    expect(() => value.tags.push('b')).toThrow(TypeError);
    expect(env.evaluate('f', {}).value).toStrictEqual({ tags: ['a'] });
  });

  it('serves a value with a "__proto__" key as it is in the snapshot, key included', () => {
    const value = JSON.parse('{"__proto__": {"admin": true}, "plan": "pro"}');
    const env = compileEnvironment({ f: flag({ rolloutPct: 100, valueOn: value }) });
    const served = env.evaluate('f', {}).value as Record<string, unknown>;
    expect(JSON.stringify(served)).toBe('{"__proto__":{"admin":true},"plan":"pro"}');
    expect(Object.getPrototypeOf(served)).toBe(Object.prototype);
  });

  it('evaluates a context without attributes, or none at all, without throwing', () => {
    const env = compileEnvironment({
      f: flag({ rolloutPct: 50, rules: [{ id: 'r', serve: 'on', conditions: [{ attribute: 'a', op: 'neq', value: 1 }] }] }),
    });
    expect(env.evaluate('f', {}).reason).toBe('rollout');
    expect(env.evaluate('f', undefined as never).reason).toBe('rollout');
    expect(env.evaluate('f', { attributes: null as never }).reason).toBe('rollout');
  });
});
