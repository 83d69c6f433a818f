import { explainEvaluation } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { findUser, flag } from './support.js';

const euRule = {
  id: 'eu-new',
  serve: 'on' as const,
  conditions: [
    { attribute: 'country', op: 'in' as const, value: ['DE', 'FR'] },
    { attribute: 'appVersion', op: 'semver_gt' as const, value: '2.0.0' },
  ],
};

describe('explainEvaluation (which step of the evaluation decided, and why)', () => {
  it('stops at the kill step for a killed flag', () => {
    const { result, steps } = explainEvaluation(flag({ killed: true }), 'f', {});
    expect(result.reason).toBe('killed');
    expect(steps).toEqual([{ step: 'killed', outcome: 'killed: serves valueOff' }]);
  });

  it('lets the killed argument (the server overlay) override the snapshot field', () => {
    expect(explainEvaluation(flag({ killed: true }), 'f', {}, false).result.reason).toBe('default');
    expect(explainEvaluation(flag(), 'f', {}, true).result.reason).toBe('killed');
  });

  it('reports each passed step before the one that decided', () => {
    expect(explainEvaluation(flag({ archived: true }), 'f', {}).steps.map((s) => s.step)).toEqual(['killed', 'archived']);
    expect(explainEvaluation(flag({ enabled: false }), 'f', {}).steps.map((s) => [s.step, s.outcome])).toEqual([
      ['killed', 'not killed'],
      ['archived', 'not archived'],
      ['enabled', 'disabled: serves valueOff'],
    ]);
  });

  it('shows every condition of a rule that did not match, with the value it tested', () => {
    const { result, steps } = explainEvaluation(flag({ rules: [euRule] }), 'f', {
      userId: 'u',
      attributes: { country: 'US', appVersion: '2.1.0' },
    });
    expect(result.reason).toBe('default');
    const rule = steps.find((s) => s.step === 'rule');
    expect(rule?.ruleId).toBe('eu-new');
    expect(rule?.conditions).toEqual([
      { attribute: 'country', op: 'in', value: ['DE', 'FR'], actual: 'US', holds: false },
      { attribute: 'appVersion', op: 'semver_gt', value: '2.0.0', actual: '2.1.0', holds: true },
    ]);
    expect(steps.at(-1)).toEqual({ step: 'rollout', outcome: 'rolloutPct 0: serves valueOff' });
  });

  it('shows a missing attribute as undefined, inherited object properties included', () => {
    const rule = { id: 'r', serve: 'on' as const, conditions: [{ attribute: 'constructor', op: 'neq' as const, value: 'x' }] };
    const { steps } = explainEvaluation(flag({ rules: [rule] }), 'f', { attributes: {} });
    expect(steps[3].conditions).toEqual([{ attribute: 'constructor', op: 'neq', value: 'x', actual: undefined, holds: false }]);
  });

  it('names the matching rule as the deciding, last step', () => {
    const { result, steps } = explainEvaluation(flag({ rules: [euRule] }), 'f', { attributes: { country: 'DE', appVersion: '3.0.0' } });
    expect(result).toStrictEqual({ value: 'blue', reason: 'rule_match', variation: 'on', ruleId: 'eu-new' });
    expect(steps.at(-1)).toMatchObject({ step: 'rule', ruleId: 'eu-new', outcome: 'matches: serves valueOn' });
  });

  it('explains a rule rollout with the bucket, in and out', () => {
    const inside = findUser('f', (b) => b < 30);
    const outside = findUser('f', (b) => b >= 30);
    const f = flag({ rules: [{ ...euRule, rolloutPct: 30 }] });
    const attributes = { country: 'FR', appVersion: '2.0.1' };
    expect(explainEvaluation(f, 'f', { userId: inside.userId, attributes }).steps.at(-1)?.outcome).toBe(
      `matches and bucket ${inside.bucket} < rolloutPct 30: serves valueOn`,
    );
    const out = explainEvaluation(f, 'f', { userId: outside.userId, attributes }).steps;
    expect(out.at(-2)?.outcome).toBe(`matches, but bucket ${outside.bucket} is not below rolloutPct 30: does not apply`);
    expect(explainEvaluation(f, 'f', { attributes }).steps.at(-2)?.outcome).toBe(
      'matches, but its rolloutPct 30 needs a userId: does not apply',
    );
  });

  it('explains the rollout step with the bucket, or the missing userId', () => {
    const { userId, bucket } = findUser('f', (b) => b < 50);
    expect(explainEvaluation(flag({ rolloutPct: 50 }), 'f', { userId }).steps.at(-1)).toEqual({
      step: 'rollout',
      outcome: `bucket ${bucket} < rolloutPct 50: serves valueOn`,
    });
    expect(explainEvaluation(flag({ rolloutPct: 50 }), 'f', {}).steps.at(-1)?.outcome).toBe(
      'rolloutPct 50 needs a userId to bucket: serves valueOff',
    );
  });
});
