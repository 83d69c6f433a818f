import { describe, expect, it } from 'vitest';
import { promotionPreview } from '../../../packages/dashboard/src/logic/config-diff.js';
import { describeRule } from '../../../packages/dashboard/src/logic/text.js';
import type { EnvironmentConfigView, Rule } from '../../../packages/dashboard/src/types.js';

const eu: Rule = { id: 'eu', serve: 'on', conditions: [{ attribute: 'country', op: 'in', value: ['DE', 'FR'] }] };
const beta: Rule = {
  id: 'beta',
  description: 'beta testers',
  serve: 'on',
  rolloutPct: 50,
  conditions: [{ attribute: 'beta', op: 'eq', value: true }],
};
const ios: Rule = { id: 'ios', serve: 'off', conditions: [] };

function config(over: Partial<EnvironmentConfigView>): EnvironmentConfigView {
  return {
    enabled: false,
    rolloutPct: 0,
    valueOn: true,
    valueOff: false,
    version: 4,
    rules: [],
    killed: false,
    schedule: [],
    nextStep: null,
    ...over,
  };
}

describe('the promotion preview', () => {
  it('lists each field the destination will change, before and after', () => {
    const preview = promotionPreview(config({ enabled: true, rolloutPct: 30, valueOn: 'blue' }), config({ valueOn: 'red' }));
    expect(preview.fields).toEqual([
      { field: 'enabled', before: 'off', after: 'on' },
      { field: 'rolloutPct', before: '0%', after: '30%' },
      { field: 'valueOn', before: '"red"', after: '"blue"' },
    ]);
    expect(preview.rules).toEqual([]);
    expect(preview.unchanged).toBe(false);
  });

  it('says the destination version becomes its own + 1, and "unchanged" when the configs already match', () => {
    const same = config({ enabled: true, rules: [eu] });
    const preview = promotionPreview({ ...same, version: 9 }, { ...same, version: 2 });
    expect(preview).toEqual({ fields: [], rules: [], unchanged: true, versionAfter: 3 });
  });

  it('compares rules by id: added, removed, changed and moved', () => {
    const changedBeta: Rule = { ...beta, rolloutPct: 100 };
    const preview = promotionPreview(
      config({ rules: [changedBeta, eu, ios] }),
      config({ rules: [eu, beta, { id: 'old', serve: 'on', conditions: [] }] }),
    );
    expect(preview.rules).toEqual([
      { kind: 'removed', id: 'old', before: 'serve on always' },
      { kind: 'changed', id: 'beta', before: describeRule(beta), after: describeRule(changedBeta) },
      { kind: 'moved', id: 'eu', before: 'position 1', after: 'position 2' },
      { kind: 'added', id: 'ios', after: 'serve off always' },
    ]);
  });

  it('ignores key order inside values and rules (JSON objects are unordered)', () => {
    const preview = promotionPreview(config({ valueOn: { a: 1, b: [1, 2] } }), config({ valueOn: { b: [1, 2], a: 1 } }));
    expect(preview.fields).toEqual([]);
  });

  it('describes a rule in one readable line', () => {
    expect(describeRule(eu)).toBe('serve on if country in [DE, FR]');
    expect(describeRule(beta)).toBe('serve on if beta eq true (50%) — beta testers');
  });
});
