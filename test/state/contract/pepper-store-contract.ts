import { describe, expect, it } from 'vitest';
import type { StateSubject } from './state-subject.js';

export function describePepperStoreContract(subject: StateSubject): void {
  describe('PepperStore', () => {
    it('creates the pepper once, 32 bytes or more, and gives every instance the same one', async () => {
      const { state, another } = await subject.fresh();
      const pepper = await state.pepper.get({ mayCreate: true });
      expect(pepper.length).toBeGreaterThanOrEqual(32);
      expect(await state.pepper.get({ mayCreate: true })).toEqual(pepper);
      expect(await (await another()).pepper.get({ mayCreate: false })).toEqual(pepper);
    });

    it('refuses to make one up when it may not: what was hashed with the lost one could never match', async () => {
      const { state } = await subject.fresh();
      await expect(state.pepper.get({ mayCreate: false })).rejects.toThrow(/missing/);
    });
  });
}
