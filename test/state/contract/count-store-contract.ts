import { describe, expect, it } from 'vitest';
import type { CountEntry, CountStore } from '../../../src/foundations/state/index.js';
import type { StateSubject } from './state-subject.js';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-05-01T10:00:00.000Z');

const entry = (hour: number, variation: string, count: number): CountEntry => ({
  hour,
  scope: 'acme/p1/prod',
  flagKey: 'checkout',
  variation,
  count,
});

/** What a store holds from `oldestHour` on, added up per hour and variation. */
async function totals(store: CountStore, oldestHour = 0): Promise<Record<string, number>> {
  const sums: Record<string, number> = {};
  await store.read(oldestHour, (e) => {
    const key = `${new Date(e.hour).toISOString()} ${e.scope} ${e.flagKey} ${e.variation}`;
    sums[key] = (sums[key] ?? 0) + e.count;
  });
  return sums;
}

export function describeCountStoreContract(subject: StateSubject): void {
  describe('CountStore', () => {
    it('starts with no count', async () => {
      const { state } = await subject.fresh();
      expect(await totals(state.counts)).toEqual({});
      await state.counts.close();
    });

    it('keeps what was added durably, adding up counts of one hour, scope, flag and variation', async () => {
      const { state, another } = await subject.fresh();
      await state.counts.read(0, () => {});
      await state.counts.add([entry(NOW, 'on', 2), entry(NOW, 'off', 1)]);
      await state.counts.add([entry(NOW, 'on', 3), entry(NOW - HOUR, 'on', 7)]);
      await state.counts.close();
      const other = await another();
      expect(await totals(other.counts)).toEqual({
        '2026-05-01T10:00:00.000Z acme/p1/prod checkout on': 5,
        '2026-05-01T10:00:00.000Z acme/p1/prod checkout off': 1,
        '2026-05-01T09:00:00.000Z acme/p1/prod checkout on': 7,
      });
      await other.counts.close();
    });

    it('hands out no hour older than the one asked for', async () => {
      const { state, another } = await subject.fresh();
      await state.counts.read(0, () => {});
      await state.counts.add([entry(NOW - 48 * HOUR, 'on', 4), entry(NOW, 'on', 1)]);
      await state.counts.close();
      const other = await another();
      expect(await totals(other.counts, NOW - 24 * HOUR)).toEqual({ '2026-05-01T10:00:00.000Z acme/p1/prod checkout on': 1 });
      await other.counts.close();
    });

    it('keeps the totals of the hours kept through a tidy, whatever it drops', async () => {
      const { state, another } = await subject.fresh();
      await state.counts.read(0, () => {});
      await state.counts.add([entry(NOW - 48 * HOUR, 'on', 4), entry(NOW, 'on', 1)]);
      await state.counts.add([entry(NOW, 'on', 2), entry(NOW, 'off', 5)]);
      await state.counts.tidy(NOW - 24 * HOUR, () => [entry(NOW, 'on', 3), entry(NOW, 'off', 5)]);
      await state.counts.add([entry(NOW, 'on', 1)]);
      await state.counts.close();
      const other = await another();
      expect(await totals(other.counts, NOW - 24 * HOUR)).toEqual({
        '2026-05-01T10:00:00.000Z acme/p1/prod checkout on': 4,
        '2026-05-01T10:00:00.000Z acme/p1/prod checkout off': 5,
      });
      await other.counts.close();
    });
  });
}
