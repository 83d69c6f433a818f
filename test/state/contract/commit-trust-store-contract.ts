import { describe, expect, it } from 'vitest';
import type { StateSubject } from './state-subject.js';

export function describeCommitTrustStoreContract(subject: StateSubject): void {
  describe('CommitTrustStore', () => {
    it('makes the signing key once, 32 bytes or more: every call and every instance get the same', async () => {
      const { state, another } = await subject.fresh();
      const other = await another();
      const [first, second] = await Promise.all([state.commitTrust.signingKey(), other.commitTrust.signingKey()]);
      expect(first.length).toBeGreaterThanOrEqual(32);
      expect(second).toEqual(first);
      expect(await (await another()).commitTrust.signingKey()).toEqual(first);
    });

    it("records where an organisation's unsigned trailers stop being believed the first time it is asked, for good", async () => {
      const { state, another } = await subject.fresh();
      const head = 'd'.repeat(40);
      expect(await state.commitTrust.unsignedTrailersUpTo('acme', async () => head)).toBe(head);
      expect(await state.commitTrust.unsignedTrailersUpTo('acme', async () => 'e'.repeat(40))).toBe(head);
      expect(await (await another()).commitTrust.unsignedTrailersUpTo('acme', async () => null)).toBe(head);
    });

    it('records none for a repository that was empty or new, and keeps none', async () => {
      const { state, another } = await subject.fresh();
      expect(await state.commitTrust.unsignedTrailersUpTo('globex', async () => null)).toBeNull();
      expect(await (await another()).commitTrust.unsignedTrailersUpTo('globex', async () => 'f'.repeat(40))).toBeNull();
    });
  });
}
