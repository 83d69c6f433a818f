import { describe, expect, it } from 'vitest';
import type { HeldKill } from '../../../src/foundations/state/index.js';
import { announced, type StateSubject } from './state-subject.js';

function held(id: string, fields: Partial<HeldKill> = {}): HeldKill {
  return {
    id,
    org: 'acme',
    project: 'shop',
    flag: 'checkout',
    environment: 'prod',
    action: 'kill',
    entry: { killedAt: '2026-05-01T10:00:00.000Z', killedBy: 'svc_agt_1234', reason: 'payments failing' },
    actor: { type: 'agent', name: 'release-bot', keyPrefix: 'svc_agt_1234' },
    summary: 'kill checkout in prod',
    heldAt: '2026-05-01T10:00:00.100Z',
    ...fields,
  };
}

export function describeHeldKillStoreContract(subject: StateSubject): void {
  describe('HeldKillStore', () => {
    it('starts with no held kill', async () => {
      const { state } = await subject.fresh();
      expect(await state.heldKills.list('acme')).toEqual([]);
    });

    it('keeps held kills durably, per organisation, oldest first: another instance lists them', async () => {
      const { state, another } = await subject.fresh();
      await state.heldKills.add(held('c1'));
      await state.heldKills.add(held('c2', { action: 'clear_kill', entry: null, summary: 'clear kill of checkout in prod' }));
      await state.heldKills.add(held('c3', { org: 'globex' }));
      const other = await another();
      expect(await other.heldKills.list('acme')).toEqual([
        held('c1'),
        held('c2', { action: 'clear_kill', entry: null, summary: 'clear kill of checkout in prod' }),
      ]);
      expect(await other.heldKills.list('globex')).toEqual([held('c3', { org: 'globex' })]);
    });

    it('keeps the first of two with one id, and removes by id within the organisation only', async () => {
      const { state } = await subject.fresh();
      await state.heldKills.add(held('c1'));
      await state.heldKills.add(held('c1', { flag: 'other' }));
      await state.heldKills.add(held('c1', { org: 'globex' }));
      expect(await state.heldKills.list('acme')).toEqual([held('c1')]);
      await state.heldKills.remove('acme', ['c1', 'unknown']);
      expect(await state.heldKills.list('acme')).toEqual([]);
      expect(await state.heldKills.list('globex')).toEqual([held('c1', { org: 'globex' })]);
    });

    it('lists, oldest first, only the held kills whose ids the caller has not seen', async () => {
      const { state } = await subject.fresh();
      // c3 is another instance's copy of c1 (added unannounced), listed like any other.
      for (const id of ['c1', 'c2', 'c3', 'c4']) await state.heldKills.add(held(id, id === 'c3' ? { madeFrom: 'c1' } : {}));
      expect((await state.heldKills.list('acme', new Set(['c1', 'c3', 'unknown']))).map((kill) => kill.id)).toEqual(['c2', 'c4']);
      expect(await state.heldKills.list('acme', new Set(['c1', 'c2', 'c4']))).toEqual([held('c3', { madeFrom: 'c1' })]);
      expect((await state.heldKills.list('acme', new Set())).map((kill) => kill.id)).toEqual(['c1', 'c2', 'c3', 'c4']);
    });

    it('announces a held kill added by another instance', async () => {
      const { state, another } = await subject.fresh();
      const other = await another();
      const heard = announced((listener) => state.heldKills.onChange(listener));
      await other.heldKills.add(held('c1'));
      await heard;
    });
  });
}
