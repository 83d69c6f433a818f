import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from '@flagops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvalApp, evalFastPath } from '../../src/apps/eval-server/eval-app.js';
import { type ServingRepository, SnapshotHolder } from '../../src/apps/eval-server/snapshot-holder.js';
import { attachStreamHub } from '../../src/apps/eval-server/stream.js';
import { EvaluationCounter } from '../../src/features/stats/evaluation-counter.js';
import { TrackNameBound } from '../../src/features/stats/event-counts.js';
import { listen } from '../../src/foundations/http/serve.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import type { FlagRepository } from '../../src/foundations/storage/index.js';
import { stateIn } from '../helpers/control-state.js';
import { ORG, recordingFetch, type SdkHarness, startSdkHarness } from '../sdk/sdk-harness.js';

/**
 * An evaluation server on a holder that serves no organisation yet (each test adds it, as service.ts does after
 * listening), the keys of an SDK harness's service, and `/healthz` saying starting.
 */
function startingServer() {
  const started = {} as { h: SdkHarness; holder: SnapshotHolder; server: Awaited<ReturnType<typeof listen>> };
  let dataDir: string;
  let counter: EvaluationCounter;
  beforeAll(async () => {
    started.h = await startSdkHarness();
    dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-starting-'));
    counter = await EvaluationCounter.open({ state: await stateIn(dataDir) });
    started.holder = new SnapshotHolder(silentLogger);
    attachStreamHub(started.holder);
    const deps = {
      keys: started.h.service.keys,
      holder: started.holder,
      counter,
      trackNames: new TrackNameBound(counter),
      logger: silentLogger,
      health: () => ({ status: 503, body: { status: 'starting' } }),
    };
    started.server = await listen(createEvalApp(deps), '127.0.0.1', 0, evalFastPath(deps));
  });
  afterAll(async () => {
    await started.server?.close();
    started.holder?.close();
    await counter?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    await started.h?.stop();
  });
  return started;
}

describe('an evaluation server that is listening but does not serve the organisation yet (starting)', () => {
  const started = startingServer();

  const requests: Array<[string, string, string | undefined]> = [
    ['POST', '/v1/evaluate', '{"key":"new-checkout"}'],
    ['POST', '/v1/evaluate?via=koa', '{"key":"new-checkout"}'],
    ['GET', '/v1/snapshot', undefined],
    ['GET', '/v1/stream', undefined],
    ['POST', '/ofrep/v1/evaluate/flags/new-checkout', '{"context":{}}'],
  ];

  it('answers a valid SDK key 503 unavailable (retry), not 404 (which says the key has no project)', async () => {
    for (const [method, route, body] of requests) {
      const res = await fetch(`${started.server.url}${route}`, {
        method,
        body,
        headers: { authorization: `Bearer ${started.h.key}`, 'content-type': 'application/json' },
      });
      expect(res.status, `${method} ${route}`).toBe(503);
      expect((await res.json()).error.code).toBe('unavailable');
    }
    const unknown = await fetch(`${started.server.url}/v1/snapshot`, { headers: { authorization: 'Bearer svc_sdk_notakeyatall0000000' } });
    expect(unknown.status).toBe(401); // keys are checked first, as always
  });

  it('the SDK retries the 503s, its ready() waits through them, and it is ready once the server serves (docs/sdk.md)', async () => {
    const { fetch, requests } = recordingFetch();
    const flags = createClient({
      evalUrl: started.server.url,
      sdkKey: started.h.key,
      fetch,
      retryInitialMs: 20,
      retryMaxMs: 50,
      sendCounts: false,
    });
    try {
      // Nothing to serve yet: status error, but ready() does not give up at the first 503 (only a refused key does).
      expect(await flags.ready(300)).toBe('error');
      // A retry may still be in flight when ready() gives up; every answered one was a 503.
      const answered = requests.filter((r) => r.path === '/v1/snapshot' && r.status !== 'pending');
      expect(answered.length).toBeGreaterThan(1);
      expect(answered.map((r) => r.status)).toEqual(answered.map(() => 503));
      await started.holder.add(ORG, started.h.repo);
      expect(await flags.ready(5_000)).toBe('ready');
      expect(flags.string('banner-text', 'fallback')).toBe('Spring sale');
    } finally {
      await flags.close();
    }
  });

  it('serves once the organisation is added', async () => {
    await started.holder.add(ORG, started.h.repo);
    const res = await fetch(`${started.server.url}/v1/evaluate`, {
      method: 'POST',
      body: '{"key":"new-checkout"}',
      headers: { authorization: `Bearer ${started.h.key}`, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    expect((await res.json())['new-checkout'].reason).toBeDefined();
  });
});

/** `repo` as the holder reads it, its reads of a commit held until release(): a first reload under way, as on a large repository. */
function heldReads(repo: FlagRepository): { repo: ServingRepository; release: () => void } {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    release,
    repo: {
      head: () => repo.head(),
      readServed: async (commit) => {
        await held;
        return repo.readServed(commit);
      },
      servedChanges: (commit, slug) => repo.servedChanges(commit, slug),
      onMainMoved: (listener) => repo.onMainMoved(listener),
      height: (oid) => repo.height(oid),
      readCommit: (oid) => repo.readCommit(oid),
    },
  };
}

describe('an evaluation server whose organisation is added but not served yet (its first reload under way)', () => {
  const started = startingServer();

  const routes: Array<[string, string, string | undefined]> = [
    ['POST', '/v1/evaluate', '{"key":"new-checkout"}'],
    ['POST', '/v1/evaluate?via=koa', '{"key":"new-checkout"}'],
    ['GET', '/v1/snapshot', undefined],
    ['GET', '/v1/snapshot?since=1', undefined],
    ['GET', '/v1/stream', undefined],
    ['POST', '/v1/events', '{"events":[{"type":"track","name":"checkout"}]}'],
    ['POST', '/ofrep/v1/evaluate/flags/new-checkout', '{"context":{}}'],
    ['POST', '/ofrep/v1/evaluate/flags', '{"context":{}}'],
  ];

  /** Each route's status, and for a 503 its error code and Retry-After (a stream that opens is closed at once). */
  async function askEvery(): Promise<Array<{ route: string; status: number; code?: string; retryAfter?: string | null }>> {
    return Promise.all(
      routes.map(async ([method, route, body]) => {
        const abort = new AbortController();
        const res = await fetch(`${started.server.url}${route}`, {
          method,
          body,
          signal: abort.signal,
          headers: { authorization: `Bearer ${started.h.key}`, 'content-type': 'application/json' },
        });
        const seen = { route: `${method} ${route}`, status: res.status };
        if (res.status < 400) {
          abort.abort();
          return seen;
        }
        return { ...seen, code: (await res.json()).error?.code, retryAfter: res.headers.get('retry-after') };
      }),
    );
  }

  it('answers every evaluation route 503 unavailable with Retry-After until it serves, then 200: never 404', async () => {
    const held = heldReads(started.h.repo);
    const adding = started.holder.add(ORG, held.repo);
    try {
      // The key is known and the organisation added: only the reload of main's head is missing.
      for (let round = 0; round < 3; round++) {
        for (const seen of await askEvery()) expect(seen).toEqual({ route: seen.route, status: 503, code: 'unavailable', retryAfter: '1' });
      }
    } finally {
      held.release();
    }
    // Asked all along while the reload finishes: each route answers 503 until it answers 200, and 200 from then on.
    const seenByRoute = new Map<string, number[]>();
    for (let served = false; !served; ) {
      served = await Promise.race([adding.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5))]);
      for (const { route, status } of await askEvery()) seenByRoute.set(route, [...(seenByRoute.get(route) ?? []), status]);
    }
    // Served: 200, 202 for events, 304 for a snapshot since the version served.
    const served = (status: number) => status < 400;
    for (const [route, statuses] of seenByRoute) {
      const firstServed = statuses.findIndex(served);
      const before = firstServed === -1 ? statuses : statuses.slice(0, firstServed);
      const after = firstServed === -1 ? [] : statuses.slice(firstServed);
      expect(before.every((s) => s === 503) && after.every(served), `${route}: ${statuses.join(' ')}`).toBe(true);
    }
    for (const { route, status } of await askEvery()) expect(served(status), `${route}: ${status}`).toBe(true);
  });
});
