import { describe, expect, it } from 'vitest';
import type { TriggerRecord } from '../../../src/foundations/state/index.js';
import { announced, type StateSubject } from './state-subject.js';

function trigger(id: string, fields: Partial<TriggerRecord> = {}): TriggerRecord {
  return {
    id,
    org: 'acme',
    flagId: 'flg_1',
    environment: 'prod',
    name: id,
    action: 'kill',
    secretHash: `hmac-sha256:${'0'.repeat(64)}`,
    createdAt: '2026-05-01T10:00:00.000Z',
    ...fields,
  };
}

export function describeTriggerStoreContract(subject: StateSubject): void {
  describe('TriggerStore', () => {
    it('starts with no trigger', async () => {
      const { state } = await subject.fresh();
      expect(await state.triggers.list()).toEqual([]);
    });

    it('adds triggers durably, oldest first: another instance lists them', async () => {
      const { state, another } = await subject.fresh();
      expect(await state.triggers.create(trigger('t1'))).toBe(true);
      expect(await state.triggers.create(trigger('t2', { environment: 'dev', org: 'globex' }))).toBe(true);
      expect(await (await another()).triggers.list()).toEqual([trigger('t1'), trigger('t2', { environment: 'dev', org: 'globex' })]);
    });

    it('adds no second trigger with an id it holds', async () => {
      const { state } = await subject.fresh();
      await state.triggers.create(trigger('t1'));
      expect(await state.triggers.create(trigger('t1', { name: 'again' }))).toBe(false);
      expect(await state.triggers.list()).toEqual([trigger('t1')]);
    });

    it('removes a trigger of its organisation durably, and finds none in another organisation or by an unknown id', async () => {
      const { state, another } = await subject.fresh();
      await state.triggers.create(trigger('t1'));
      await state.triggers.create(trigger('t2'));
      expect(await state.triggers.remove('globex', 't1')).toBeUndefined();
      expect(await state.triggers.remove('acme', 'nope')).toBeUndefined();
      expect(await state.triggers.remove('acme', 't1')).toEqual(trigger('t1'));
      expect(await (await another()).triggers.list()).toEqual([trigger('t2')]);
    });

    it('hands out copies: changing what list returned changes nothing stored', async () => {
      const { state } = await subject.fresh();
      await state.triggers.create(trigger('t1'));
      (await state.triggers.list())[0].flagId = 'flg_2';
      expect(await state.triggers.list()).toEqual([trigger('t1')]);
    });

    it('announces a trigger added through another instance, which list then shows', async () => {
      const { state, another } = await subject.fresh();
      await state.triggers.list();
      const other = await another();
      const heard = announced((listener) => state.triggers.onChange(listener));
      await other.triggers.create(trigger('t1'));
      await heard;
      expect(await state.triggers.list()).toEqual([trigger('t1')]);
    });
  });
}
