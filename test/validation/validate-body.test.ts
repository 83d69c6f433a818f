import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/foundations/errors/kinds.js';
import { validateBody } from '../../src/foundations/validation/index.js';
import { condition, refusal, rule, rules } from './fixtures.js';

describe('validating a request body', () => {
  it('returns a valid body unchanged', () => {
    const body = { name: 'Shop', slug: 'shop' };
    expect(validateBody('project-create', body)).toBe(body);
  });

  it('refuses a body that is not a JSON object', () => {
    for (const body of [null, [], 'x', 3]) {
      expect(refusal(() => validateBody('project-create', body)).message).toBe('the body must be a JSON object');
    }
  });

  it('throws invalid_input naming the offending field', () => {
    const err = refusal(() => validateBody('project-create', { name: 'Shop', slug: 'Shop!' }));
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe('slug');
    expect(err.message).toMatch(/^slug: must match \^\[a-z0-9\]\[a-z0-9-\]\{0,62\}\$/);
  });

  it('lists every problem, naming nested fields as an API user writes them', () => {
    const err = refusal(() =>
      validateBody('config-update', { rolloutPct: 101, rules: [rule('r', { conditions: [condition('eq', 'x'), condition('in', 'DE')] })] }),
    );
    expect(err.message).toBe(
      'rolloutPct: must be a number from 0 to 100; rules[0].conditions[1].value: must be an array of strings, numbers, booleans or nulls for op "in"',
    );
    expect(err.field).toBe('rolloutPct');
  });

  it('quotes at most 200 characters of a field name from the request, however long the name', () => {
    const name = 'n'.repeat(500_000);
    const err = refusal(() => validateBody('project-create', { name: 'Shop', slug: 'shop', [name]: 1, [`${name}2`]: 2 }));
    const quoted = `${'n'.repeat(200)}…`;
    expect(err.message).toBe(`${quoted}: is not an allowed field; ${quoted}: is not an allowed field`);
    expect(err.field).toBe(quoted);
  });

  it('quotes at most 200 characters of the field an error names, wherever the message is made', () => {
    const name = 'x'.repeat(500_000);
    const err = new InvalidInputError(`unknown field ${name}; expected key, keys and context`, name);
    expect(err.message).toBe(`unknown field ${'x'.repeat(200)}…; expected key, keys and context`);
    expect(err.details).toEqual({ field: `${'x'.repeat(200)}…` });
  });

  describe('project create', () => {
    it('requires name and slug', () => {
      expect(refusal(() => validateBody('project-create', {})).message).toBe('name: is required; slug: is required');
    });
  });

  describe('flag create', () => {
    it('needs a key; name, description, kind and defaultValue are optional', () => {
      expect(validateBody('flag-create', { key: 'checkout-v2' })).toEqual({ key: 'checkout-v2' });
      expect(() =>
        validateBody('flag-create', { key: 'x', name: 'X', description: 'd', kind: 'json', defaultValue: { a: 1 } }),
      ).not.toThrow();
    });

    it('refuses the key "kills"', () => {
      expect(refusal(() => validateBody('flag-create', { key: 'kills' })).message).toBe(
        'key: must not be "kills", which is reserved for kills.yaml',
      );
    });

    it('refuses a defaultValue of another type than the kind', () => {
      expect(refusal(() => validateBody('flag-create', { key: 'x', kind: 'number', defaultValue: 'ten' })).message).toBe(
        "defaultValue: must be a number, as the flag's kind is number",
      );
    });

    it('refuses server-owned fields such as id and archivedAt', () => {
      expect(refusal(() => validateBody('flag-create', { key: 'x', id: 'flg_1' })).message).toBe('id: is not an allowed field');
    });
  });

  describe('flag patch (metadata only)', () => {
    it('accepts name and description', () => {
      expect(() => validateBody('flag-patch', { name: 'New name', description: '' })).not.toThrow();
    });

    it('refuses a behaviour change such as kind or enabled', () => {
      expect(refusal(() => validateBody('flag-patch', { kind: 'string' })).field).toBe('kind');
      expect(refusal(() => validateBody('flag-patch', { enabled: true })).field).toBe('enabled');
    });
  });

  describe('config update', () => {
    it('accepts any subset of its fields, rules without id included (the server assigns one)', () => {
      expect(() => validateBody('config-update', {})).not.toThrow();
      expect(() =>
        validateBody('config-update', {
          enabled: true,
          rolloutPct: 0,
          valueOn: 'a',
          valueOff: 'b',
          clearKill: true,
          expectedVersion: 4,
          rules: [{ serve: 'on', conditions: [condition('gt', 3, 'age')] }],
        }),
      ).not.toThrow();
    });

    it('refuses 65 rules and accepts 64', () => {
      expect(() => validateBody('config-update', { rules: rules(64) })).not.toThrow();
      expect(refusal(() => validateBody('config-update', { rules: rules(65) })).message).toBe('rules: must have at most 64 rules');
    });

    it('refuses duplicate rule ids', () => {
      expect(refusal(() => validateBody('config-update', { rules: [rule('a'), rule('a')] })).message).toMatch(
        /^rules\[1\]\.id: duplicate rule id "a"/,
      );
    });

    it('refuses an expectedVersion that is not a whole number', () => {
      expect(refusal(() => validateBody('config-update', { expectedVersion: '3' })).field).toBe('expectedVersion');
      expect(refusal(() => validateBody('config-update', { expectedVersion: 1.5 })).field).toBe('expectedVersion');
    });

    it('refuses a version field: the server owns it', () => {
      expect(refusal(() => validateBody('config-update', { version: 3 })).message).toBe('version: is not an allowed field');
    });
  });

  describe('promote', () => {
    it('needs fromEnv naming dev, staging or prod', () => {
      expect(validateBody('promote', { fromEnv: 'staging' })).toEqual({ fromEnv: 'staging' });
      expect(refusal(() => validateBody('promote', {})).message).toBe('fromEnv: is required');
      expect(refusal(() => validateBody('promote', { fromEnv: 'qa' })).message).toBe('fromEnv: must be one of "dev", "staging", "prod"');
    });
  });

  describe('kill (schemas/api/kill.schema.json)', () => {
    it('accepts an empty object and a reason of up to 4096 characters', () => {
      expect(validateBody('kill', {})).toEqual({});
      expect(validateBody('kill', { reason: 'x'.repeat(4096) })).toEqual({ reason: 'x'.repeat(4096) });
    });

    it('refuses any other field, a reason that is not a string, and a longer one, naming the field', () => {
      expect(refusal(() => validateBody('kill', { reason: 'x', force: true })).field).toBe('force');
      expect(refusal(() => validateBody('kill', { reason: 5 })).field).toBe('reason');
      expect(refusal(() => validateBody('kill', { reason: 'x'.repeat(4097) })).field).toBe('reason');
    });
  });

  describe('key create', () => {
    it('accepts admin and agent keys with or without a name', () => {
      expect(() => validateBody('key-create', { kind: 'admin' })).not.toThrow();
      expect(() => validateBody('key-create', { kind: 'agent', name: 'deploy-bot' })).not.toThrow();
    });

    it('requires projectId and environment for an sdk key', () => {
      expect(() => validateBody('key-create', { kind: 'sdk', projectId: 'prj_0123456789abcdef', environment: 'prod' })).not.toThrow();
      expect(refusal(() => validateBody('key-create', { kind: 'sdk' })).message).toBe('projectId: is required; environment: is required');
      expect(refusal(() => validateBody('key-create', { kind: 'sdk', projectId: 'p1', environment: 'qa' })).field).toBe('environment');
    });

    it('refuses an unknown kind', () => {
      expect(refusal(() => validateBody('key-create', { kind: 'root' })).message).toBe('kind: must be one of "admin", "agent", "sdk"');
    });
  });
});

describe('a flag patch with lifecycle data', () => {
  it('takes a lifecycle, null to remove it, and null for owner or expiresAt to remove those', () => {
    for (const lifecycle of [
      { type: 'experiment', owner: 'team-a', expiresAt: '2027-03-31' },
      null,
      { owner: null, expiresAt: null },
      {},
    ]) {
      expect(validateBody('flag-patch', { lifecycle })).toEqual({ lifecycle });
    }
  });

  it('says what is wrong inside the lifecycle, without the noise of its null alternative', () => {
    expect(refusal(() => validateBody('flag-patch', { lifecycle: { type: 'temporary' } })).message).toBe(
      'lifecycle.type: must be release, experiment, operational, permission or kill-switch',
    );
    expect(refusal(() => validateBody('flag-patch', { lifecycle: { expiresAt: '2027-13-01', owner: '' } })).message).toBe(
      'lifecycle.owner: must not be empty; lifecycle.expiresAt: must be an ISO 8601 date such as 2027-03-31 or a date-time such as 2027-03-31T12:00:00Z',
    );
    expect(refusal(() => validateBody('flag-patch', { lifecycle: 'experiment' })).message).toBe('lifecycle: must be an object or null');
  });
});
