import { describe, expect, it } from 'vitest';
import { validateDocument } from '../../src/foundations/validation/index.js';
import { condition, conditions, config, rule, rules } from './fixtures.js';

const FILE = 'projects/shop/environments/prod/checkout-v2.yaml';

describe('an environment config', () => {
  it('is valid with enabled, rolloutPct, valueOn and valueOff; version and rules may be left out', () => {
    expect(validateDocument('environment-config', { enabled: false, rolloutPct: 0, valueOn: true, valueOff: false })).toEqual([]);
  });

  it('names each missing required field', () => {
    expect(validateDocument('environment-config', {}).map((i) => i.path)).toEqual(['/enabled', '/rolloutPct', '/valueOn', '/valueOff']);
  });

  it('refuses unknown fields, such as a kill flag that belongs in kills.yaml', () => {
    expect(validateDocument('environment-config', config({ killed: true }), FILE)).toEqual([
      { file: FILE, path: '/killed', message: 'is not an allowed field' },
    ]);
  });

  it('refuses a non-boolean enabled', () => {
    expect(validateDocument('environment-config', config({ enabled: 'yes' }))).toEqual([
      { path: '/enabled', message: 'must be a boolean' },
    ]);
  });

  describe('rules (at most 64)', () => {
    it('accepts 64 rules', () => {
      expect(validateDocument('environment-config', config({ rules: rules(64) }))).toEqual([]);
    });

    it('refuses 65 rules', () => {
      expect(validateDocument('environment-config', config({ rules: rules(65) }))).toEqual([
        { path: '/rules', message: 'must have at most 64 rules' },
      ]);
    });
  });

  describe('conditions of a rule (at most 32)', () => {
    it('accepts 32 conditions', () => {
      expect(validateDocument('environment-config', config({ rules: [rule('r', { conditions: conditions(32) })] }))).toEqual([]);
    });

    it('refuses 33 conditions', () => {
      expect(validateDocument('environment-config', config({ rules: [rule('r', { conditions: conditions(33) })] }))).toEqual([
        { path: '/rules/0/conditions', message: 'must have at most 32 conditions' },
      ]);
    });

    it('accepts a rule without conditions, which matches every context', () => {
      expect(validateDocument('environment-config', config({ rules: [{ id: 'all', serve: 'off' }] }))).toEqual([]);
    });
  });

  describe('rolloutPct (0 to 100)', () => {
    it.each([0, 0.5, 50, 99.99, 100])('accepts %d on the config and on a rule', (pct) => {
      expect(validateDocument('environment-config', config({ rolloutPct: pct, rules: [rule('r', { rolloutPct: pct })] }))).toEqual([]);
    });

    it.each([-1, -0.01, 100.5, 101])('refuses %d on the config', (pct) => {
      expect(validateDocument('environment-config', config({ rolloutPct: pct }))).toEqual([
        { path: '/rolloutPct', message: 'must be a number from 0 to 100' },
      ]);
    });

    it.each([-1, 100.5])('refuses %d on a rule', (pct) => {
      expect(validateDocument('environment-config', config({ rules: [rule('r', { rolloutPct: pct })] }))).toEqual([
        { path: '/rules/0/rolloutPct', message: 'must be a number from 0 to 100' },
      ]);
    });

    it('refuses a string percentage', () => {
      expect(validateDocument('environment-config', config({ rolloutPct: '50' }))).toEqual([
        { path: '/rolloutPct', message: 'must be a number from 0 to 100' },
      ]);
    });
  });

  describe('version', () => {
    it.each([-1, 1.5, '3'])('refuses %j: it is a whole number from 0', (version) => {
      expect(validateDocument('environment-config', config({ version }))).toHaveLength(1);
      expect(validateDocument('environment-config', config({ version }))[0].path).toBe('/version');
    });
  });

  describe('a rule', () => {
    it('needs an id in a file, so that reviews and the audit trail can name it', () => {
      const { id: _, ...withoutId } = rule('r');
      expect(validateDocument('environment-config', config({ rules: [withoutId] }))).toEqual([
        { path: '/rules/0/id', message: 'is required' },
      ]);
    });

    it('serves on, off or a variant name, nothing else', () => {
      for (const serve of ['Maybe', 'default', '', 3])
        expect(validateDocument('environment-config', config({ rules: [rule('r', { serve })] })), String(serve)).toEqual([
          { path: '/rules/0/serve', message: 'must be on, off or the name of a variant' },
        ]);
    });

    it('refuses an id with spaces', () => {
      expect(validateDocument('environment-config', config({ rules: [rule('beta users')] }))[0]).toMatchObject({ path: '/rules/0/id' });
    });

    it('refuses a condition with an empty attribute or an unknown operator', () => {
      const issues = validateDocument(
        'environment-config',
        config({ rules: [rule('r', { conditions: [condition('eq', 1, ''), condition('like', 'x')] })] }),
      );
      expect(issues).toEqual([
        { path: '/rules/0/conditions/0/attribute', message: 'must not be empty' },
        {
          path: '/rules/0/conditions/1/op',
          message: expect.stringMatching(/^must be one of "eq", "neq", "in", .*"semver_lt", "in_segment", "not_in_segment"$/),
        },
      ]);
    });
  });

  describe('rule ids (unique within a config)', () => {
    it('refuses a duplicate, pointing at the second rule', () => {
      expect(validateDocument('environment-config', config({ rules: [rule('beta'), rule('other'), rule('beta')] }), FILE)).toEqual([
        {
          file: FILE,
          path: '/rules/2/id',
          message: 'duplicate rule id "beta" (already used by /rules/0); rule ids must be unique within a config',
        },
      ]);
    });

    it('treats ids as case-sensitive', () => {
      expect(validateDocument('environment-config', config({ rules: [rule('beta'), rule('Beta')] }))).toEqual([]);
    });
  });
});

describe('the size limits of a committed config (docs/flags-repository.md)', () => {
  const nested = (levels: number) => {
    let value: unknown = true;
    for (let i = 0; i < levels; i++) value = [value];
    return value;
  };

  it('accepts values nested 64 levels deep and refuses 65, in valueOn and valueOff alike', () => {
    expect(validateDocument('environment-config', config({ valueOn: nested(64), valueOff: nested(64) }))).toEqual([]);
    expect(validateDocument('environment-config', config({ valueOn: nested(65), valueOff: nested(65) }), FILE)).toEqual([
      { file: FILE, path: '/valueOn', message: 'must not nest arrays and objects more than 64 levels deep' },
      { file: FILE, path: '/valueOff', message: 'must not nest arrays and objects more than 64 levels deep' },
    ]);
  });

  it('accepts 1,000 values in an in list and refuses 1,001', () => {
    const inList = (n: number) =>
      config({
        rules: [
          rule('r', {
            conditions: [
              condition(
                'in',
                Array.from({ length: n }, (_, i) => i),
              ),
            ],
          }),
        ],
      });
    expect(validateDocument('environment-config', inList(1000))).toEqual([]);
    expect(validateDocument('environment-config', inList(1001))).toEqual([
      { path: '/rules/0/conditions/0/value', message: 'must list at most 1,000 values' },
    ]);
  });

  it('reports an oversized list of rules or conditions once, without checking each item', () => {
    expect(validateDocument('environment-config', config({ rules: Array(100_000).fill(1) }))).toEqual([
      { path: '/rules', message: 'must have at most 64 rules' },
    ]);
    const conditions = config({ rules: [rule('r', { conditions: Array(100_000).fill(1) })] });
    expect(validateDocument('environment-config', conditions)).toEqual([
      { path: '/rules/0/conditions', message: 'must have at most 32 conditions' },
    ]);
  });

  it('refuses a condition string longer than 65,536 characters', () => {
    const eq = (length: number) => config({ rules: [rule('r', { conditions: [condition('contains', 'x'.repeat(length))] })] });
    expect(validateDocument('environment-config', eq(65_536))).toEqual([]);
    expect(validateDocument('environment-config', eq(65_537))).toEqual([
      { path: '/rules/0/conditions/0/value', message: 'must be at most 65,536 characters long' },
    ]);
  });
});
