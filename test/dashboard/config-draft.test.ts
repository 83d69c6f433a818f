import { describe, expect, it } from 'vitest';
import { checkConfigDraft } from '../../src/apps/dashboard/config-draft.js';
import { InvalidInputError } from '../../src/foundations/errors/kinds.js';

const RULES = `- id: eu
  serve: on
  conditions:
    - attribute: country
      op: in
      value: [DE, FR]
- serve: off
  conditions:
    - attribute: age
      op: gt
      value: "18"
`;

describe("checking a config draft (the editor's live validation)", () => {
  it('turns valid rules YAML into the rules a config update sends', () => {
    const result = checkConfigDraft({
      kind: 'boolean',
      config: { enabled: true, rolloutPct: 25, valueOn: true, valueOff: false },
      rulesYaml: RULES.replace('"18"', '18'),
    });
    expect(result.issues).toEqual([]);
    expect(result.rules).toEqual([
      { id: 'eu', serve: 'on', conditions: [{ attribute: 'country', op: 'in', value: ['DE', 'FR'] }] },
      { serve: 'off', conditions: [{ attribute: 'age', op: 'gt', value: 18 }] },
    ]);
  });

  it('reports a schema problem inside the rules with its field path and line in the text (operator types)', () => {
    const result = checkConfigDraft({ kind: 'boolean', rulesYaml: RULES });
    expect(result.rules).toBeNull();
    expect(result.issues).toEqual([
      { field: 'rules[1].conditions[0].value', message: 'must be a number for op "gt"', line: 11, column: 14 },
    ]);
    // As read, issues and all, so the rule builder can show the rows the messages point at.
    expect((result.parsedRules as Array<{ conditions: unknown[] }>)[1].conditions).toEqual([{ attribute: 'age', op: 'gt', value: '18' }]);
  });

  it('reports YAML syntax errors with their line', () => {
    const result = checkConfigDraft({ kind: 'boolean', rulesYaml: '- serve: on\n  conditions: [\n' });
    expect(result.rules).toBeNull();
    expect(result.parsedRules).toBeNull();
    expect(result.issues[0]).toMatchObject({
      field: 'rules',
      message: expect.stringMatching(/^YAML syntax error/),
      line: expect.any(Number),
    });
  });

  it('reads an empty text as no rules', () => {
    expect(checkConfigDraft({ kind: 'boolean', rulesYaml: '  # nothing yet\n' })).toEqual({ rules: [], parsedRules: [], issues: [] });
  });

  it('refuses .inf, which JSON cannot carry', () => {
    const result = checkConfigDraft({ kind: 'boolean', rulesYaml: '- serve: on\n  rolloutPct: .inf\n' });
    expect(result.issues).toEqual([{ field: 'rules[0].rolloutPct', message: expect.stringContaining('finite'), line: 2, column: 15 }]);
  });

  it("applies the API's limits and checks: rollout range, rule count, duplicate ids, values of the flag's kind", () => {
    const many = Array.from({ length: 65 }, (_, i) => `- id: r${i}\n  serve: on\n`).join('');
    const fields = (input: unknown) => checkConfigDraft(input).issues.map((i) => i.field);
    expect(fields({ kind: 'boolean', config: { rolloutPct: 101 } })).toEqual(['rolloutPct']);
    expect(fields({ kind: 'boolean', rulesYaml: many })).toEqual(['rules']);
    expect(fields({ kind: 'boolean', rulesYaml: '- id: a\n  serve: on\n- id: a\n  serve: off\n' })).toEqual(['rules[1].id']);
    expect(fields({ kind: 'number', config: { valueOn: 'ten', valueOff: 0 } })).toEqual(['valueOn']);
    expect(fields({ kind: 'json', config: { valueOn: { any: ['thing'] }, valueOff: null } })).toEqual([]);
  });

  it('refuses a malformed request as 400, naming the field', () => {
    for (const [input, field] of [
      [{ kind: 'colour' }, 'kind'],
      [{ kind: 'boolean', config: { clearKill: true } }, 'config.clearKill'],
      [{ kind: 'boolean', rulesYaml: 3 }, 'rulesYaml'],
      [{ kind: 'boolean', extra: 1 }, 'extra'],
    ] as const) {
      const err = (() => {
        try {
          checkConfigDraft(input);
        } catch (e) {
          return e;
        }
      })();
      expect(err, JSON.stringify(input)).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).field).toBe(field);
    }
  });
});
