import { describe, expect, it } from 'vitest';
import { validateDocument } from '../../src/foundations/validation/index.js';

const flag = (extra: Record<string, unknown> = {}) => ({ key: 'checkout-v2', ...extra });

describe('a flag file', () => {
  it('needs only a key: id, name, description, kind, defaultValue and archivedAt are optional', () => {
    expect(validateDocument('flag', flag())).toEqual([]);
    expect(
      validateDocument(
        'flag',
        flag({ id: 'flg_1', name: 'Checkout', description: 'New', kind: 'boolean', defaultValue: false, archivedAt: null }),
      ),
    ).toEqual([]);
  });

  describe('key', () => {
    it.each(['a', 'checkout-v2', 'Checkout_V2', 'search.ranking', '9lives', 'k'.repeat(128), 'kills-switch', 'killswitch'])(
      'accepts %j',
      (key) => {
        expect(validateDocument('flag', flag({ key }))).toEqual([]);
      },
    );

    it.each(['', '-x', '.hidden', '_x', 'a b', 'a/b', 'k'.repeat(129), 'ümlaut'])('refuses %j', (key) => {
      expect(validateDocument('flag', flag({ key }))).toEqual([
        { path: '/key', message: expect.stringMatching(/^must be 1 to 128 letters/) },
      ]);
    });

    it.each(['kills', 'KILLS', 'Kills'])('refuses %j, the name of kills.yaml beside the configs', (key) => {
      expect(validateDocument('flag', flag({ key }))).toEqual([
        { path: '/key', message: 'must not be "kills", which is reserved for kills.yaml' },
      ]);
    });
  });

  it('accepts the four kinds and refuses others', () => {
    expect(validateDocument('flag', flag({ kind: 'boolean', defaultValue: true }))).toEqual([]);
    expect(validateDocument('flag', flag({ kind: 'string', defaultValue: 'classic' }))).toEqual([]);
    expect(validateDocument('flag', flag({ kind: 'number', defaultValue: 2.5 }))).toEqual([]);
    expect(validateDocument('flag', flag({ kind: 'json', defaultValue: { a: [1] } }))).toEqual([]);
    expect(validateDocument('flag', flag({ kind: 'integer' }))).toEqual([
      { path: '/kind', message: 'must be one of "boolean", "string", "number", "json"' },
    ]);
  });

  describe('defaultValue', () => {
    it('must match the kind, boolean when kind is left out', () => {
      expect(validateDocument('flag', flag({ defaultValue: 'yes' }))).toEqual([
        { path: '/defaultValue', message: "must be true or false, as the flag's kind is boolean" },
      ]);
      expect(validateDocument('flag', flag({ kind: 'string', defaultValue: 3 }))).toEqual([
        { path: '/defaultValue', message: "must be a string, as the flag's kind is string" },
      ]);
      expect(validateDocument('flag', flag({ kind: 'number', defaultValue: '3' }))).toEqual([
        { path: '/defaultValue', message: "must be a number, as the flag's kind is number" },
      ]);
    });

    it('may be any JSON value, null included, for a json flag', () => {
      for (const defaultValue of [null, 1, 'x', [1, 'a'], { nested: { deep: true } }]) {
        expect(validateDocument('flag', flag({ kind: 'json', defaultValue }))).toEqual([]);
      }
    });
  });

  describe('archivedAt', () => {
    it.each(['2025-01-15T09:30:00Z', '2025-01-15T09:30:00.123Z', '2024-02-29T23:59:59+02:00', null])('accepts %j', (archivedAt) => {
      expect(validateDocument('flag', flag({ archivedAt }))).toEqual([]);
    });

    it.each(['2025-01-15', 'yesterday', '2025-02-30T00:00:00Z', '2023-02-29T00:00:00Z', '2025-01-15T24:00:00Z', '2025-01-15 09:30:00Z'])(
      'refuses %j',
      (archivedAt) => {
        expect(validateDocument('flag', flag({ archivedAt }))).toEqual([
          { path: '/archivedAt', message: 'must be an ISO 8601 date-time such as 2024-05-01T12:00:00Z, or null' },
        ]);
      },
    );

    it('refuses a value that is neither a string nor null', () => {
      expect(validateDocument('flag', flag({ archivedAt: false }))).toEqual([{ path: '/archivedAt', message: 'must be a string or null' }]);
    });
  });

  it('refuses unknown fields such as environments, which live in their own files', () => {
    expect(validateDocument('flag', flag({ environments: {} }))).toEqual([{ path: '/environments', message: 'is not an allowed field' }]);
  });
});

describe('a flag file with lifecycle data', () => {
  const flag = (lifecycle: unknown) => ({ key: 'checkout-v2', lifecycle });

  it('takes a type, an owner and an expiry given as a date or a date-time', () => {
    expect(validateDocument('flag', flag({ type: 'experiment', owner: 'team-checkout', expiresAt: '2027-03-31' }))).toEqual([]);
    expect(validateDocument('flag', flag({ type: 'kill-switch', expiresAt: '2027-03-31T12:00:00Z' }))).toEqual([]);
    expect(validateDocument('flag', flag({}))).toEqual([]);
  });

  it('refuses an unknown type, an impossible date and a field it does not know, naming each', () => {
    expect(validateDocument('flag', flag({ type: 'temporary' }))).toEqual([
      { path: '/lifecycle/type', message: 'must be release, experiment, operational, permission or kill-switch' },
    ]);
    expect(validateDocument('flag', flag({ expiresAt: '2027-02-30' }))).toEqual([
      { path: '/lifecycle/expiresAt', message: 'must be an ISO 8601 date such as 2027-03-31 or a date-time such as 2027-03-31T12:00:00Z' },
    ]);
    expect(validateDocument('flag', flag({ expires: '2027-03-31' })).map((e) => e.path)).toEqual(['/lifecycle/expires']);
  });
});
