import { describe, expect, it } from 'vitest';
import type { UserRecord } from '../../../src/foundations/state/index.js';
import { announced, type StateSubject } from './state-subject.js';

const HASH = `scrypt$16$1$1$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(32).toString('base64')}`;

function user(id: string, username: string, org = 'acme'): UserRecord {
  return { id, org, username, name: username, passwordHash: HASH, createdAt: '2026-05-01T10:00:00.000Z' };
}

export function describeUserStoreContract(subject: StateSubject): void {
  describe('UserStore', () => {
    it('starts with no user', async () => {
      const { state } = await subject.fresh();
      expect(await state.users.list()).toEqual([]);
    });

    it('adds users durably, oldest first: another instance lists them', async () => {
      const { state, another } = await subject.fresh();
      expect(await state.users.create(user('u1', 'alice'))).toBe(true);
      expect(await state.users.create(user('u2', 'gary', 'globex'))).toBe(true);
      expect(await state.users.list()).toEqual([user('u1', 'alice'), user('u2', 'gary', 'globex')]);
      expect(await (await another()).users.list()).toEqual([user('u1', 'alice'), user('u2', 'gary', 'globex')]);
    });

    it('keeps usernames unique in the whole installation, whatever their letter case', async () => {
      const { state } = await subject.fresh();
      await state.users.create(user('u1', 'alice'));
      expect(await state.users.create(user('u2', 'Alice', 'globex'))).toBe(false);
      expect(await state.users.list()).toEqual([user('u1', 'alice')]);
    });

    it('adds one of two users created with one username at once, through two instances', async () => {
      const { state, another } = await subject.fresh();
      const other = await another();
      const outcomes = await Promise.all([state.users.create(user('u1', 'bob')), other.users.create(user('u2', 'BOB'))]);
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      expect(await state.users.list()).toHaveLength(1);
    });

    it('removes a user of its organisation durably, and finds none in another organisation or by an unknown id', async () => {
      const { state, another } = await subject.fresh();
      await state.users.create(user('u1', 'alice'));
      await state.users.create(user('u2', 'bob'));
      expect(await state.users.remove('globex', 'u1')).toBeUndefined();
      expect(await state.users.remove('acme', 'nope')).toBeUndefined();
      expect(await state.users.remove('acme', 'u1')).toEqual(user('u1', 'alice'));
      expect(await (await another()).users.list()).toEqual([user('u2', 'bob')]);
    });

    it('hands out copies: changing what list returned changes nothing stored', async () => {
      const { state } = await subject.fresh();
      await state.users.create(user('u1', 'alice'));
      const listed = await state.users.list();
      listed[0].name = 'Mallory';
      expect(await state.users.list()).toEqual([user('u1', 'alice')]);
    });

    it('announces a user added through another instance, which list then shows', async () => {
      const { state, another } = await subject.fresh();
      await state.users.list();
      const other = await another();
      const heard = announced((listener) => state.users.onChange(listener));
      await other.users.create(user('u1', 'alice'));
      await heard;
      expect(await state.users.list()).toEqual([user('u1', 'alice')]);
    });
  });
}
