import { describe, expect, it } from 'vitest';
import type { StateSubject } from './state-subject.js';

export function describeReplicaBatchLedgerContract(subject: StateSubject): void {
  describe('ReplicaBatchLedger', () => {
    it('takes a batch once per organisation and refuses its retry', async () => {
      const { state } = await subject.fresh();
      expect(await state.replicaBatches.claim('acme', 'batch-0001')).toBe(true);
      expect(await state.replicaBatches.claim('acme', 'batch-0001')).toBe(false);
      expect(await state.replicaBatches.claim('globex', 'batch-0001')).toBe(true);
    });

    it('refuses a retry through another instance, as after a restart', async () => {
      const { state, another } = await subject.fresh();
      expect(await state.replicaBatches.claim('acme', 'batch-0001')).toBe(true);
      const other = await another();
      expect(await other.replicaBatches.claim('acme', 'batch-0001')).toBe(false);
      expect(await other.replicaBatches.claim('acme', 'batch-0002')).toBe(true);
    });

    it('lets exactly one of many claims of one batch at once through', async () => {
      const { state } = await subject.fresh();
      const answers = await Promise.all(Array.from({ length: 5 }, () => state.replicaBatches.claim('acme', 'batch-0001')));
      expect(answers.filter(Boolean)).toHaveLength(1);
    });
  });
}
