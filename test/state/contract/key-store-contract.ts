import { describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../../src/foundations/state/index.js';
import { announced, type StateSubject } from './state-subject.js';

const AT = '2026-05-01T10:00:00.000Z';

export function key(id: string, fields: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id,
    org: 'acme',
    kind: 'admin',
    name: id,
    prefix: `svc_adm_${id.padEnd(8, 'x').slice(0, 8)}`,
    hash: `hmac-sha256:${'0'.repeat(64)}`,
    createdAt: AT,
    ...fields,
  };
}

export function describeKeyStoreContract(subject: StateSubject): void {
  describe('KeyStore', () => {
    it('starts with no organisation and no key', async () => {
      const { state } = await subject.fresh();
      expect(await state.keys.list()).toEqual({ organisations: [], keys: [] });
    });

    it('adds what a plan returns, durably: another instance lists it', async () => {
      const { state, another } = await subject.fresh();
      const sdk = key('k2', { kind: 'sdk', projectId: 'p1', environment: 'prod' });
      const result = await state.keys.add(() => ({
        organisations: [{ name: 'acme', createdAt: AT }],
        keys: [key('k1'), sdk],
        result: 'done',
      }));
      expect(result).toBe('done');
      const expected = { organisations: [{ name: 'acme', createdAt: AT }], keys: [key('k1'), sdk] };
      expect(await state.keys.list()).toEqual(expected);
      expect(await (await another()).keys.list()).toEqual(expected);
    });

    it('keeps an organisation that exists as it is', async () => {
      const { state } = await subject.fresh();
      await state.keys.add(() => ({ organisations: [{ name: 'acme', createdAt: AT }], result: undefined }));
      await state.keys.add(() => ({
        organisations: [
          { name: 'acme', createdAt: '2027-01-01T00:00:00.000Z' },
          { name: 'globex', createdAt: AT },
        ],
        result: undefined,
      }));
      expect((await state.keys.list()).organisations).toEqual([
        { name: 'acme', createdAt: AT },
        { name: 'globex', createdAt: AT },
      ]);
    });

    it('adds nothing when the plan throws, and rejects with its error', async () => {
      const { state } = await subject.fresh();
      const refused = state.keys.add(() => {
        throw new Error('refused by the plan');
      });
      await expect(refused).rejects.toThrow('refused by the plan');
      expect(await state.keys.list()).toEqual({ organisations: [], keys: [] });
    });

    it('runs plans one at a time: each sees what the one before added', async () => {
      const { state } = await subject.fresh();
      await Promise.all(
        Array.from({ length: 10 }, () => state.keys.add((current) => ({ keys: [key(`k${current.keys.length}`)], result: undefined }))),
      );
      expect((await state.keys.list()).keys.map((k) => k.id).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `k${i}`).sort());
    });

    it('revokes a key of its organisation once: a second revoke keeps the first time', async () => {
      const { state, another } = await subject.fresh();
      await state.keys.add(() => ({ keys: [key('k1')], result: undefined }));
      expect(await state.keys.revoke('acme', 'k1', AT)).toEqual({ ...key('k1'), revokedAt: AT });
      expect(await state.keys.revoke('acme', 'k1', '2027-01-01T00:00:00.000Z')).toEqual({ ...key('k1'), revokedAt: AT });
      expect((await (await another()).keys.list()).keys).toEqual([{ ...key('k1'), revokedAt: AT }]);
    });

    it('finds no key to revoke in another organisation, nor an unknown one, and changes nothing', async () => {
      const { state } = await subject.fresh();
      await state.keys.add(() => ({ keys: [key('k1')], result: undefined }));
      expect(await state.keys.revoke('globex', 'k1', AT)).toBeUndefined();
      expect(await state.keys.revoke('acme', 'nope', AT)).toBeUndefined();
      expect((await state.keys.list()).keys).toEqual([key('k1')]);
    });

    it('hands out copies: changing what list returned changes nothing stored', async () => {
      const { state } = await subject.fresh();
      await state.keys.add(() => ({ keys: [key('k1')], result: undefined }));
      const listed = await state.keys.list();
      listed.keys[0].revokedAt = AT;
      listed.keys.push(key('k2'));
      expect((await state.keys.list()).keys).toEqual([key('k1')]);
    });

    it('keeps the limits of a key: projects, environments and expiry', async () => {
      const { state, another } = await subject.fresh();
      const limited = key('k1', { kind: 'agent', projects: ['p1', 'p2'], environments: ['dev'], expiresAt: '2030-01-01T00:00:00.000Z' });
      await state.keys.add(() => ({ keys: [limited], result: undefined }));
      expect((await (await another()).keys.list()).keys).toEqual([limited]);
    });

    it('keeps the key a key was created with', async () => {
      const { state, another } = await subject.fresh();
      const child = key('k2', { createdBy: 'k1' });
      await state.keys.add(() => ({ keys: [key('k1'), child], result: undefined }));
      expect((await (await another()).keys.list()).keys).toEqual([key('k1'), child]);
    });

    it('rotates a key in one step: the old one marked with its replacement and grace, the new one added', async () => {
      const { state, another } = await subject.fresh();
      await state.keys.add(() => ({ keys: [key('k1', { environments: ['prod'] })], result: undefined }));
      const replacement = key('k2', { environments: ['prod'], rotatedFrom: 'k1' });
      const graceEndsAt = '2026-05-01T11:00:00.000Z';
      const outcome = await state.keys.rotate('acme', 'k1', (old, current) => {
        expect(old).toEqual(key('k1', { environments: ['prod'] }));
        expect(current.keys).toHaveLength(1);
        return { replacement, rotatedAt: AT, graceEndsAt };
      });
      const old = { ...key('k1', { environments: ['prod'] }), rotatedAt: AT, replacedBy: 'k2', graceEndsAt };
      expect(outcome).toEqual({ old, replacement });
      expect((await (await another()).keys.list()).keys).toEqual([old, replacement]);
    });

    it('rotates nothing when the plan throws, or the key is of another organisation', async () => {
      const { state } = await subject.fresh();
      await state.keys.add(() => ({ keys: [key('k1')], result: undefined }));
      await expect(
        state.keys.rotate('acme', 'k1', () => {
          throw new Error('already rotated');
        }),
      ).rejects.toThrow('already rotated');
      expect(await state.keys.rotate('globex', 'k1', () => ({ replacement: key('k2'), rotatedAt: AT, graceEndsAt: AT }))).toBeUndefined();
      expect((await state.keys.list()).keys).toEqual([key('k1')]);
    });

    it('announces a change made through another instance, which list then shows', async () => {
      const { state, another } = await subject.fresh();
      await state.keys.list();
      const other = await another();
      const heard = announced((listener) => state.keys.onChange(listener));
      await other.keys.add(() => ({ keys: [key('k1')], result: undefined }));
      await heard;
      expect((await state.keys.list()).keys).toEqual([key('k1')]);
      const heardAgain = announced((listener) => state.keys.onChange(listener));
      await other.keys.revoke('acme', 'k1', AT);
      await heardAgain;
      expect((await state.keys.list()).keys).toEqual([{ ...key('k1'), revokedAt: AT }]);
    });

    const check = (digit: string) => `hmac-sha256:${digit.repeat(64)}`;

    it("refuses another pepper's fingerprint than the keys were stored with, changing nothing, on every instance", async () => {
      const { state, another } = await subject.fresh();
      await state.keys.matchPepper(check('a'));
      await state.keys.add(() => ({ keys: [key('k1')], result: undefined }));
      await state.keys.matchPepper(check('a'));
      await expect(state.keys.matchPepper(check('b'))).rejects.toThrow(/pepper .*is not the .*keys .*were hashed with/);
      const restarted = await another();
      await expect(restarted.keys.matchPepper(check('b'))).rejects.toThrow(/pepper .*is not the .*keys .*were hashed with/);
      await restarted.keys.matchPepper(check('a'));
      expect((await restarted.keys.list()).keys).toEqual([key('k1')]);
    });

    it('records the fingerprint where none is, as of keys stored before fingerprints were, and where no key is', async () => {
      const { state, another } = await subject.fresh();
      await state.keys.add(() => ({ keys: [key('k1')], result: undefined }));
      await state.keys.matchPepper(check('a'));
      await expect((await another()).keys.matchPepper(check('b'))).rejects.toThrow(/were hashed with/);

      const empty = await subject.fresh();
      await empty.state.keys.matchPepper(check('a'));
      await empty.state.keys.matchPepper(check('b'));
      await empty.state.keys.add(() => ({ keys: [key('k1')], result: undefined }));
      await expect((await empty.another()).keys.matchPepper(check('a'))).rejects.toThrow(/were hashed with/);
    });
  });
}
