import { OPERATORS, SEGMENT_OPERATORS } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { keyActor } from '../../../packages/dashboard/src/logic/actors.js';
import { actionWords, actorName } from '../../../packages/dashboard/src/logic/audit-words.js';
import { reapplyFields, reapplyRules } from '../../../packages/dashboard/src/logic/reapply.js';
import {
  addChips,
  fieldOfMessage,
  moveRule,
  newRuleId,
  OPERATOR_GROUPS,
  placeOf,
  rulesForBuilder,
  withOperator,
} from '../../../packages/dashboard/src/logic/rule-model.js';
import type { Rule } from '../../../packages/dashboard/src/types.js';

describe('the rule builder model', () => {
  it('offers every operator of the core once, segment operators with the segment editor', () => {
    const choices = OPERATOR_GROUPS.flatMap((group) => group.choices);
    expect(choices.map((choice) => choice.op).sort()).toEqual([...OPERATORS, ...SEGMENT_OPERATORS].sort());
    expect(choices.filter((choice) => choice.editor === 'segment').map((choice) => choice.op)).toEqual([...SEGMENT_OPERATORS]);
  });

  it('keeps what was typed when the operator changes, and drops the attribute for segment operators', () => {
    expect(withOperator({ attribute: 'country', op: 'eq', value: 'DE' }, 'in')).toEqual({ attribute: 'country', op: 'in', value: ['DE'] });
    expect(withOperator({ attribute: 'country', op: 'in', value: ['DE', 'FR'] }, 'neq')).toEqual({
      attribute: 'country',
      op: 'neq',
      value: 'DE',
    });
    expect(withOperator({ attribute: 'age', op: 'eq', value: '18' }, 'gt')).toEqual({ attribute: 'age', op: 'gt', value: 18 });
    expect(withOperator({ attribute: 'plan', op: 'eq', value: 'beta' }, 'in_segment')).toEqual({ op: 'in_segment', value: 'beta' });
    expect(withOperator({ op: 'in_segment', value: 'beta' }, 'semver_gt')).toEqual({ attribute: '', op: 'semver_gt', value: 'beta' });
  });

  it('adds chips split on commas, trimmed, each once', () => {
    expect(addChips(['DE'], ' FR, ,DE, IT ')).toEqual(['DE', 'FR', 'IT']);
  });

  it('moves a rule to another place (drag or Move up/down)', () => {
    expect(moveRule(['a', 'b', 'c'], 2, 0)).toEqual(['c', 'a', 'b']);
    expect(moveRule(['a', 'b', 'c'], 0, 1)).toEqual(['b', 'a', 'c']);
    expect(moveRule(['a', 'b', 'c'], 1, 9)).toEqual(['a', 'c', 'b']);
  });

  it('gives new rules ids of the server form that no rule has', () => {
    let n = 0;
    const random = () => (n++ < 8 ? 0 : 0.5);
    expect(newRuleId(new Set(['r_aaaaaaaa']), random)).toBe('r_ssssssss');
  });

  it('places server messages at their rule or condition row', () => {
    expect(placeOf('rules[1].conditions[0].value')).toEqual({ rule: 1, condition: 0 });
    expect(placeOf('rules[2].rolloutPct')).toEqual({ rule: 2, condition: null });
    expect(placeOf('rules')).toEqual({ rule: null, condition: null });
    expect(placeOf('valueOn')).toBeNull();
    expect(fieldOfMessage('rules[1].conditions[0].value: must be a number for op "gt"')).toEqual({
      field: 'rules[1].conditions[0].value',
      message: 'must be a number for op "gt"',
    });
    expect(fieldOfMessage('the body must be a JSON object')).toBeNull();
  });

  it('reads rules from YAML text for the rows, values as typed, and refuses shapes it cannot draw', () => {
    expect(rulesForBuilder([{ id: 'a', serve: 'on', conditions: [{ attribute: 'age', op: 'gt', value: '18' }] }])).toEqual([
      { id: 'a', serve: 'on', conditions: [{ attribute: 'age', op: 'gt', value: '18' }] },
    ]);
    expect(rulesForBuilder([{ serve: 'off' }])).toEqual([{ id: '', serve: 'off', conditions: [] }]);
    expect(rulesForBuilder({ serve: 'on' })).toBeNull();
    expect(rulesForBuilder([{ conditions: 'country' }])).toBeNull();
    expect(rulesForBuilder(null)).toBeNull();
  });
});

describe('reapplying edits after a conflict', () => {
  const rule = (id: string, serve = 'on'): Rule => ({ id, serve, conditions: [] });

  it('takes the fields the person changed, and the fresh value of every other field', () => {
    const base = { enabled: false, rolloutPct: '10', valueOn: 'true', valueOff: 'false' };
    const mine = { ...base, rolloutPct: '45' };
    const fresh = { ...base, enabled: true, rolloutPct: '35' };
    expect(reapplyFields(base, mine, fresh)).toEqual({ enabled: true, rolloutPct: '45', valueOn: 'true', valueOff: 'false' });
  });

  it('replays removed, changed and added rules, keeping what someone else added', () => {
    const base = [rule('a'), rule('b'), rule('c')];
    const mine = [rule('a', 'off'), rule('new'), rule('c')]; // changed a, removed b, added new after a
    const fresh = [rule('a'), rule('b'), rule('c'), rule('theirs')];
    expect(reapplyRules(base, mine, fresh).map((r) => `${r.id}:${r.serve}`)).toEqual(['a:off', 'new:on', 'c:on', 'theirs:on']);
  });

  it("keeps the person's order when they reordered", () => {
    const base = [rule('a'), rule('b')];
    expect(reapplyRules(base, [rule('b'), rule('a')], [rule('a'), rule('x'), rule('b')]).map((r) => r.id)).toEqual(['b', 'x', 'a']);
  });

  it('keeps a rule someone else removed only when the person changed it', () => {
    const base = [rule('a'), rule('b')];
    expect(reapplyRules(base, [rule('a'), rule('b')], [rule('a')]).map((r) => r.id)).toEqual(['a']);
    expect(reapplyRules(base, [rule('a'), rule('b', 'off')], [rule('a')]).map((r) => r.id)).toEqual(['a', 'b']);
  });
});

describe('actors and actions in words', () => {
  it("shows a key's name with its prefix beside it, or its kind when this organisation does not know it", () => {
    const names = new Map([['svc_agt_deploy12', { prefix: 'svc_agt_deploy12', kind: 'agent' as const, name: 'deploy-bot' }]]);
    expect(keyActor('svc_agt_deploy12', names)).toEqual({ name: 'deploy-bot', keyPrefix: 'svc_agt_deploy12' });
    expect(keyActor('svc_agt_3kq9x2ab', names)).toEqual({ name: 'an agent key', keyPrefix: 'svc_agt_3kq9x2ab' });
    expect(keyActor('Alice Martin', names)).toEqual({ name: 'Alice Martin' });
  });

  it('names actions in words and actors by name first', () => {
    expect(actionWords('config_update')).toBe('Config changed');
    expect(actionWords('some_new_action')).toBe('some new action');
    expect(actorName({ type: 'agent', keyPrefix: 'svc_agt_3kq9x2ab', name: 'deploy-bot' })).toBe('deploy-bot');
    expect(actorName({ type: 'agent', keyPrefix: 'svc_agt_3kq9x2ab', name: 'svc_agt_3kq9x2ab' })).toBe('an agent key');
    expect(actorName({ type: 'scheduler', name: 'scheduler' })).toBe('the scheduler');
  });
});
