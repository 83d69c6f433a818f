import { fileURLToPath } from 'node:url';
import { createClient } from '@flagops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkKey } from '../eval-server/harness.js';
import { PROMPTLY_MS, until } from '../helpers/deadlines.js';
import { bundleForNode, type ChildRun, runNode } from './bundle-helpers.js';
import { quiet, recordingFetch, type SdkHarness, startSdkHarness, watchedScheduler, watchServerStreams } from './sdk-harness.js';

describe('close() (docs/sdk.md, "Closing")', () => {
  let h: SdkHarness;

  beforeAll(async () => {
    h = await startSdkHarness();
  });
  afterAll(() => h?.stop());

  for (const mode of ['local', 'remote'] as const) {
    it(`leaves no timer pending and makes no request afterwards (${mode} mode, stream and polling)`, async () => {
      const { scheduler, state } = watchedScheduler();
      const recording = recordingFetch();
      // A key of its own, so that its stream is told apart from other clients' at the server.
      const key = await sdkKey(h, 'shop', 'prod');
      const streams = watchServerStreams(key);
      try {
        const c = createClient({
          evalUrl: h.service.evalUrl,
          sdkKey: key,
          mode,
          scheduler,
          fetch: recording.fetch,
          pollIntervalMs: 30,
          countsIntervalMs: 30,
          logger: quiet,
        });
        await c.ready();
        await c.details('new-checkout', false, { userId: 'u1' });
        await until(
          async () => streams.open,
          (open) => open === 1,
        );
        expect(state.pending.size).toBeGreaterThan(0); // there was something to stop
        await c.close();
        state.closed = true;
        const requestsAtClose = recording.requests.length;
        expect(state.pending.size).toBe(0);
        // A client acts on a timer, an answer or a stream event: no timer is left, every request is settled and
        // its stream is gone at the server, so nothing is left that could make it send a request.
        await until(
          async () => recording.requests.filter((r) => r.status === 'pending'),
          (pending) => pending.length === 0,
        );
        await until(
          async () => streams.open,
          (open) => open === 0,
        );
        expect(state.firedAfterClose).toBe(0);
        expect(recording.requests.length).toBe(requestsAtClose);
      } finally {
        streams.stop();
      }
    });
  }

  it('lets a Node process exit by itself right after, with streams, polls and count reports running before', async () => {
    const bundle = await bundleForNode(fileURLToPath(new URL('./fixtures/close-child.ts', import.meta.url)));
    let run: ChildRun;
    try {
      run = await runNode(bundle.file, { FLAGOPS_EVAL_URL: h.service.evalUrl, FLAGOPS_SDK_KEY: h.key });
    } finally {
      await bundle.remove();
    }
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const { closedAt, statuses } = JSON.parse(run.stdout);
    expect(statuses).toEqual(['ready', 'ready', 'ready']);
    // Anything left behind (a 100 ms poll timer, an open stream socket) would keep the process alive for good.
    expect(run.exitedAt - closedAt).toBeLessThan(PROMPTLY_MS);
  });

  it('does not wait forever for a fetch that ignores its abort signal: the last report has a 2 s deadline', async () => {
    let hang = false;
    const stubborn: typeof fetch = (input, init) => (hang ? new Promise(() => {}) : fetch(input, { ...init, signal: undefined }));
    const c = createClient({
      evalUrl: h.service.evalUrl,
      sdkKey: h.key,
      fetch: stubborn,
      stream: false,
      countsIntervalMs: 3_600_000,
      logger: quiet,
    });
    await c.ready();
    c.boolean('new-checkout', false, { userId: 'u1' }); // a count to report on close
    hang = true;
    const started = performance.now();
    await c.close();
    expect(performance.now() - started).toBeLessThan(PROMPTLY_MS);
  });

  it('resolves pending ready() calls and can be called twice', async () => {
    const c = createClient({ evalUrl: 'http://127.0.0.1:9', sdkKey: h.key, logger: quiet, readyTimeoutMs: 60_000 });
    const ready = c.ready();
    await c.close();
    await c.close();
    expect(await ready).toBe(c.status);
  });
});
