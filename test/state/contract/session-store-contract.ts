import { describe, expect, it } from 'vitest';
import type { SessionRecord } from '../../../src/foundations/state/index.js';
import { announced, type StateSubject } from './state-subject.js';

const AT = '2026-05-01T10:00:00.000Z';

function session(id: string, fields: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    tokenHash: id.padEnd(64, '0'),
    org: 'acme',
    userId: 'usr_1',
    createdAt: AT,
    lastSeenAt: AT,
    expiresAt: '2026-05-01T22:00:00.000Z',
    ...fields,
  };
}

export function describeSessionStoreContract(subject: StateSubject): void {
  describe('SessionStore', () => {
    it('starts with no session', async () => {
      const { state } = await subject.fresh();
      expect(await state.sessions.list()).toEqual([]);
    });

    it('adds sessions durably, oldest first: another instance lists them', async () => {
      const { state, another } = await subject.fresh();
      await state.sessions.create(session('s1'));
      await state.sessions.create(session('s2', { userId: 'usr_2' }));
      expect(await (await another()).sessions.list()).toEqual([session('s1'), session('s2', { userId: 'usr_2' })]);
    });

    it('keeps a single sign-on session\u2019s role, email and username, and a session without them as it was', async () => {
      const { state, another } = await subject.fresh();
      const sso = session('s1', { userId: 'oidc:sub-1', role: 'editor@shop,web', email: 'alice@example.com', username: 'alice' });
      await state.sessions.create(sso);
      await state.sessions.create(session('s2'));
      await state.sessions.touch([{ id: 's1', lastSeenAt: '2026-03-01T12:30:00.000Z' }]);
      const listed = await (await another()).sessions.list();
      expect(listed).toEqual([{ ...sso, lastSeenAt: '2026-03-01T12:30:00.000Z' }, session('s2')]);
      expect(listed[1]).not.toHaveProperty('role');
    });

    it('keeps every session created at once through two instances', async () => {
      const { state, another } = await subject.fresh();
      const other = await another();
      await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? state : other).sessions.create(session(`s${i}`))));
      expect((await state.sessions.list()).map((s) => s.id).sort()).toEqual(['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7']);
    });

    it('removes sessions by id durably, ignoring ids it does not hold', async () => {
      const { state, another } = await subject.fresh();
      for (const id of ['s1', 's2', 's3']) await state.sessions.create(session(id));
      await state.sessions.remove(['s1', 's3', 'nope']);
      expect(await (await another()).sessions.list()).toEqual([session('s2')]);
    });

    it('records activity, and never brings back a session removed meanwhile', async () => {
      const { state, another } = await subject.fresh();
      await state.sessions.create(session('s1'));
      await state.sessions.create(session('s2'));
      await state.sessions.remove(['s2']);
      await state.sessions.touch([
        { id: 's1', lastSeenAt: '2026-05-01T11:00:00.000Z' },
        { id: 's2', lastSeenAt: '2026-05-01T11:00:00.000Z' },
      ]);
      expect(await (await another()).sessions.list()).toEqual([session('s1', { lastSeenAt: '2026-05-01T11:00:00.000Z' })]);
    });

    it('finds a session by its token hash as stored now, including one added through another instance', async () => {
      const { state, another } = await subject.fresh();
      await state.sessions.list();
      await (await another()).sessions.create(session('s1', { email: 'alice@example.com' }));
      expect(await state.sessions.find(session('s1').tokenHash)).toEqual(session('s1', { email: 'alice@example.com' }));
      expect(await state.sessions.find(session('s2').tokenHash)).toBeNull();
      await state.sessions.remove(['s1']);
      expect(await (await another()).sessions.find(session('s1').tokenHash)).toBeNull();
    });

    it('hands out copies: changing what list returned changes nothing stored', async () => {
      const { state } = await subject.fresh();
      await state.sessions.create(session('s1'));
      (await state.sessions.list())[0].expiresAt = '2099-01-01T00:00:00.000Z';
      expect(await state.sessions.list()).toEqual([session('s1')]);
    });

    it('announces a session added through another instance, which list then shows', async () => {
      const { state, another } = await subject.fresh();
      await state.sessions.list();
      const other = await another();
      const heard = announced((listener) => state.sessions.onChange(listener));
      await other.sessions.create(session('s1'));
      await heard;
      expect(await state.sessions.list()).toEqual([session('s1')]);
    });

    it('announces activity recorded through another instance, so a session used only there does not look idle here', async () => {
      const { state, another } = await subject.fresh();
      await state.sessions.create(session('s1'));
      await state.sessions.list();
      const other = await another();
      const heard = announced((listener) => state.sessions.onChange(listener));
      await other.sessions.touch([{ id: 's1', lastSeenAt: '2026-05-01T11:30:00.000Z' }]);
      await heard;
      expect(await state.sessions.list()).toEqual([session('s1', { lastSeenAt: '2026-05-01T11:30:00.000Z' })]);
    });
  });
}
