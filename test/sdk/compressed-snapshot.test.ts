import { createClient } from '@flagops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchServedAnswers } from '../helpers/served-encodings.js';
import { quiet, type SdkHarness, startSdkHarness } from './sdk-harness.js';

const eu = { userId: 'user-1', attributes: { country: 'DE', appVersion: '2.4.0' } };

describe('the SDK fetching snapshots compressed', () => {
  let h: SdkHarness;

  beforeAll(async () => {
    h = await startSdkHarness();
  });
  afterAll(() => h?.stop());

  it('asks for br, gets the snapshot in br on the wire, and evaluates what it decoded', async () => {
    const identity = Buffer.byteLength(h.service.holder.view('acme', 'prj_shop', 'prod')!.snapshotJson());
    const served = watchServedAnswers(h.key, '/v1/snapshot');
    const client = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, logger: quiet, mode: 'local', stream: false });
    try {
      expect(await client.ready()).toBe('ready');
      expect(client.details('new-checkout', false, eu)).toMatchObject({ value: true, reason: 'rule_match' });
      const snapshots = served.answers.filter((a) => a.status === 200);
      expect(snapshots.length).toBeGreaterThan(0);
      for (const answer of snapshots) {
        expect(answer.encoding).toBe('br');
        expect(answer.length).toBeLessThan(identity);
      }
    } finally {
      served.stop();
      await client.close();
    }
  });
});
