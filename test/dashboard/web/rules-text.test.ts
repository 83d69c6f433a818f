import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { rulesToYaml, yamlScalar } from '../../../packages/dashboard/src/logic/rules-text.js';
import type { JsonValue, Rule } from '../../../packages/dashboard/src/types.js';

describe('rules as YAML text', () => {
  it('writes rules the way the flags repository holds them', () => {
    const rules: Rule[] = [
      {
        id: 'old-ios-app',
        description: 'App versions before 4.0.0',
        serve: 'off',
        conditions: [{ attribute: 'appVersion', op: 'semver_lt', value: '4.0.0' }],
      },
      { id: 'eu', serve: 'on', rolloutPct: 50, conditions: [{ attribute: 'country', op: 'in', value: ['DE', 'FR'] }] },
      { id: 'all', serve: 'on', conditions: [] },
    ];
    expect(rulesToYaml(rules)).toBe(`- id: old-ios-app
  description: "App versions before 4.0.0"
  serve: off
  conditions:
    - attribute: appVersion
      op: semver_lt
      value: 4.0.0
- id: eu
  serve: on
  rolloutPct: 50
  conditions:
    - attribute: country
      op: in
      value: [DE, FR]
- id: all
  serve: on
  conditions: []
`);
    expect(parse(rulesToYaml(rules))).toEqual(rules);
  });

  it('writes no rules as an empty text', () => {
    expect(rulesToYaml([])).toBe('');
  });

  it('quotes exactly the strings YAML would read as something else, so every value reads back the same', () => {
    const tricky: JsonValue[] = [
      'true',
      'False',
      'null',
      '~',
      '123',
      '1e3',
      '0x1F',
      '.inf',
      '-',
      '',
      ' lead',
      'a: b',
      '#x',
      'x #y',
      'on',
      'off',
      'yes',
      '4.0.0',
      'é',
      'multi\nline',
      '"q"',
      "it's",
      '[1]',
      '{a}',
      '*ref',
      '&a',
      '!tag',
      '%p',
      '@at',
      '`b`',
    ];
    const values: JsonValue[] = [...tricky, 0, -1.5, true, false, null, ['DE', 'true', 3, null], { nested: ['x'] }];
    for (const value of values) expect(parse(`v: ${yamlScalar(value)}`).v, JSON.stringify(value)).toEqual(value);
    expect(yamlScalar('on')).toBe('on');
    expect(yamlScalar('true')).toBe('"true"');
  });
});
