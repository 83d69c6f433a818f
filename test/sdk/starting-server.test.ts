import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from '@flagops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvalApp, evalFastPath } from '../../src/eval-server/eval-app.js';
import { SnapshotHolder } from '../../src/eval-server/snapshot-holder.js';
import { attachStreamHub } from '../../src/eval-server/stream/stream-hubs.js';
import { listen } from '../../src/http/serve.js';
import { silentLogger } from '../../src/log/logger.js';
import { EvaluationCounter } from '../../src/stats/evaluation-counter.js';
import { ORG, recordingFetch, type SdkHarness, startSdkHarness } from './sdk-harness.js';

/** What docs/sdk.md says of a server that is starting: it answers 503 `unavailable`, and the SDK retries. */
describe('the SDK against an evaluation server that is starting', () => {
  let h: SdkHarness;
  let dataDir: string;
  let counter: EvaluationCounter;
  let holder: SnapshotHolder;
  let server: Awaited<ReturnType<typeof listen>>;

  beforeAll(async () => {
    h = await startSdkHarness();
    dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-sdk-starting-'));
    counter = await EvaluationCounter.open({ dataDir });
    holder = new SnapshotHolder(silentLogger); // the organisation is added later, as service.ts does after listening
    attachStreamHub(holder);
    const deps = { keys: h.service.keys, holder, counter, logger: silentLogger, health: () => ({ status: 503, body: {} }) };
    server = await listen(createEvalApp(deps), '127.0.0.1', 0, evalFastPath(deps));
  });
  afterAll(async () => {
    await server?.close();
    holder?.close();
    await counter?.close();
    await rm(dataDir, { recursive: true, force: true });
    await h?.stop();
  });

  it('the client retries the 503s, ready() waits through them, and it is ready once the server serves', async () => {
    const { fetch, requests } = recordingFetch();
    const flags = createClient({ evalUrl: server.url, sdkKey: h.key, fetch, retryInitialMs: 20, retryMaxMs: 50, sendCounts: false });
    try {
      // Nothing to serve yet: status error, but ready() does not give up at the first 503 (only a refused key does).
      expect(await flags.ready(300)).toBe('error');
      const snapshots = requests.filter((r) => r.path === '/v1/snapshot');
      expect(snapshots.length).toBeGreaterThan(1);
      expect(snapshots.every((r) => r.status === 503)).toBe(true);
      await holder.add(ORG, h.repo);
      expect(await flags.ready(5_000)).toBe('ready');
      expect(flags.string('banner-text', 'fallback')).toBe('Spring sale');
    } finally {
      await flags.close();
    }
  });
});
