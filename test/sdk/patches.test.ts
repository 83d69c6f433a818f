import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EvaluationResult, Snapshot } from '@flagops/core';
import { createClient, type EvaluationDetails, type FetchFunction, type LocalClient } from '@flagops/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { changeSequence, sequenceProjectFiles } from '../eval-server/change-sequence.js';
import { commitFiles, evaluate, sdkKey } from '../eval-server/harness.js';
import { until } from '../helpers/deadlines.js';
import { rawRequest } from '../helpers/raw-http.js';
import { killRequest, nextEvent, ORG, quiet, type SdkHarness, setConfig, startSdkHarness } from './sdk-harness.js';

/** Polling an hour apart: anything seen within a test came through the stream. */
const NO_POLLING = 3_600_000;

const contexts = [
  {},
  { userId: 'ana' },
  { userId: 'ben', attributes: { country: 'DE', appVersion: '2.5.0' } },
  { userId: 'cleo', attributes: { country: 'FR', appVersion: '1.0.0' } },
  ...Array.from({ length: 12 }, (_, i) => ({ userId: `user-${i}`, attributes: { country: i % 2 ? 'DE' : 'US', appVersion: '3.0.0' } })),
];

/** What the SDK answers for a server result, asked with a null default (which accepts any value). */
function sdkAnswer(server: EvaluationResult): Partial<EvaluationDetails> {
  if (server.reason === 'flag_not_found')
    return { value: null, reason: 'error', errorCode: 'FLAG_NOT_FOUND', errorMessage: expect.any(String) };
  return server as EvaluationDetails;
}

interface SeenSnapshotRequest {
  url: string;
  status?: number;
  length?: number;
  /** The answer's Content-Encoding, when compressed. */
  encoding?: string;
}

/** The GET /v1/snapshot requests made with `key`, as the server sees them, with each answer's status and length. */
function watchSnapshotRequests(key: string) {
  const seen: SeenSnapshotRequest[] = [];
  const onStart = (message: unknown) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    if (!request.url?.startsWith('/v1/snapshot') || request.headers.authorization !== `Bearer ${key}`) return;
    const entry: SeenSnapshotRequest = { url: request.url };
    seen.push(entry);
    response.once('finish', () => {
      entry.status = response.statusCode;
      entry.length = Number(response.getHeader('content-length') ?? 0);
      const encoding = response.getHeader('content-encoding');
      if (typeof encoding === 'string') entry.encoding = encoding;
    });
  };
  diagnostics.subscribe('http.server.request.start', onStart);
  return { seen, stop: () => diagnostics.unsubscribe('http.server.request.start', onStart) };
}

describe('an SDK following changes with stream patches and polled deltas answers as the server does', () => {
  let h: SdkHarness;
  /** Each test's project: the shop, or one of its own where a test runs the whole sequence. */
  let project: { slug: string; serverKey: string; clientKey: string };
  const projects = new Map<string, typeof project>();
  const clients: LocalClient[] = [];
  const watchers: Array<{ stop(): void }> = [];
  const serverSnapshot = async () =>
    (await (
      await fetch(`${h.service.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${project.serverKey}` } })
    ).json()) as Snapshot;
  const serverVersion = () => h.service.holder.view(ORG, `prj_${project.slug}`, 'prod')!.version;
  const local = (options: {
    stream: boolean;
    pollIntervalMs: number;
    fetch?: FetchFunction;
    bootstrap?: Snapshot;
    retryInitialMs?: number;
    retryMaxMs?: number;
  }) => {
    const client = createClient({ evalUrl: h.service.evalUrl, sdkKey: project.clientKey, sendCounts: false, logger: quiet, ...options });
    clients.push(client as LocalClient);
    return client as LocalClient;
  };
  /** The snapshot requests of the clients (the test's own requests use another key). */
  const watch = () => {
    const watcher = watchSnapshotRequests(project.clientKey);
    watchers.push(watcher);
    return watcher.seen;
  };
  const run = (slug: string) => {
    project = projects.get(slug)!;
  };

  /** Every key the server serves or served, evaluated for every context by the SDK and by POST /v1/evaluate. */
  async function expectSameAnswers(client: LocalClient, keys: string[], label: string): Promise<void> {
    await until(
      async () => client.version,
      (v) => v === serverVersion(),
    );
    for (const context of contexts) {
      const server = (await (await evaluate(h, project.serverKey, { keys, context })).json()) as Record<string, EvaluationResult>;
      for (const key of keys)
        expect(client.details(key, null, context), `${label}: ${key} for ${JSON.stringify(context)}`).toStrictEqual(sdkAnswer(server[key]));
    }
  }

  beforeAll(async () => {
    h = await startSdkHarness();
    const slugs = ['shop', 'polled', 'streamed'];
    await commitFiles(
      h.repo,
      slugs.flatMap((slug) => sequenceProjectFiles(slug)),
      'projects with a segment and a flag naming it',
    );
    await h.service.holder.served(ORG);
    for (const slug of slugs)
      projects.set(slug, { slug, serverKey: await sdkKey(h, slug, 'prod'), clientKey: await sdkKey(h, slug, 'prod') });
    run('shop');
  });
  afterEach(async () => {
    for (const watcher of watchers.splice(0)) watcher.stop();
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(() => h?.stop());

  it('applies every change of the sequence from stream patches alone, with no snapshot request', async () => {
    run('streamed');
    const client = local({ stream: true, pollIntervalMs: NO_POLLING });
    expect(await client.ready()).toBe('ready');
    const seen = watch();
    const keys = new Set(Object.keys((await serverSnapshot()).flags));
    await expectSameAnswers(client, [...keys], 'start');
    for (const step of changeSequence('prod', 'streamed')) {
      await step.run(h);
      for (const key of Object.keys((await serverSnapshot()).flags)) keys.add(key);
      await expectSameAnswers(client, [...keys], step.name);
    }
    // A revalidation (304) may follow the first load; nothing was fetched.
    expect(seen.filter((r) => r.status !== 304)).toEqual([]);
  });

  it('applies every change of the sequence from polled deltas, each answer smaller than the snapshot', async () => {
    run('polled');
    const client = local({ stream: false, pollIntervalMs: 20 });
    expect(await client.ready()).toBe('ready');
    const seen = watch();
    const keys = new Set(Object.keys((await serverSnapshot()).flags));
    const fullLength = JSON.stringify(await serverSnapshot()).length;
    for (const step of changeSequence('prod', 'polled')) {
      await step.run(h);
      for (const key of Object.keys((await serverSnapshot()).flags)) keys.add(key);
      await expectSameAnswers(client, [...keys], step.name);
    }
    const answered = seen.filter((r) => r.status === 200);
    expect(answered.length).toBeGreaterThanOrEqual(changeSequence().length);
    for (const request of seen) expect(request.url).toMatch(/^\/v1\/snapshot\?since=\d+$/);
    for (const request of answered) expect(request.length).toBeLessThan(fullLength / 2);
  });

  it('starts a reconnecting stream from the patch since the version it holds', async () => {
    run('shop');
    const network = cuttableNetwork();
    const client = local({ stream: true, pollIntervalMs: NO_POLLING, fetch: network.fetch, retryInitialMs: 20, retryMaxMs: 50 });
    expect(await client.ready()).toBe('ready');
    // Ready comes with the first snapshot, maybe before the stream's request went out: cut the network only once
    // it has, or that request would wait for the reconnection and go out with no version to start from.
    await until(
      async () => network.streams.length,
      (n) => n === 1,
    );
    // The stream is cut and held down, and snapshot requests fail: two changes later, only the first event
    // of the stream it reconnects can bring the client up to date.
    const held = client.version;
    network.cut();
    await setConfig(h, 'new-checkout', { rolloutPct: 81 });
    await setConfig(h, 'banner-text', { valueOn: 'Late sale', valueOff: 'Hello' });
    expect(client.version).toBe(held);
    network.reconnect(false);
    await expectSameAnswers(client, Object.keys((await serverSnapshot()).flags), 'reconnected');
    expect(network.streams).toEqual([undefined, `since=${held}`]);
  });

  it('fetches when a patch does not follow its version, or does not apply, and still answers as the server', async () => {
    run('shop');
    for (const garble of [
      (data: string) => data.replace(/"since":\d+/, '"since":0'),
      (data: string) => data.replace('"patch":{"flags":{', '"patch":{"flags":{"broken":7,'),
    ]) {
      const client = local({ stream: true, pollIntervalMs: NO_POLLING, fetch: garblingStream(garble) });
      expect(await client.ready()).toBe('ready');
      const seen = watch();
      await setConfig(h, 'new-checkout', { rolloutPct: 10 + clients.length });
      await expectSameAnswers(client, Object.keys((await serverSnapshot()).flags), 'after a fetch');
      const fetched = seen.filter((r) => r.status !== 304);
      expect(fetched.map((r) => r.url)).toEqual([expect.stringMatching(/^\/v1\/snapshot\?since=\d+$/)]);
      await client.close();
    }
  });

  it('takes the whole snapshot when the server answers one to its since', async () => {
    run('shop');
    const network = cuttableNetwork();
    const client = local({ stream: false, pollIntervalMs: 20, fetch: network.fetch, retryInitialMs: 20, retryMaxMs: 50 });
    expect(await client.ready()).toBe('ready');
    // More changes than the window keeps, while the client cannot poll: its version is too old for a delta.
    network.cut();
    const seen = watch();
    for (let i = 0; i < 65; i++) await (i % 2 ? h.kills.clear(killRequest(h, 'theme')) : h.kills.kill(killRequest(h, 'theme')));
    network.reconnect();
    await expectSameAnswers(client, Object.keys((await serverSnapshot()).flags), 'replaced');
    const taken = seen.filter((r) => r.status === 200);
    expect(taken).toEqual([expect.objectContaining({ url: expect.stringMatching(/^\/v1\/snapshot\?since=\d+$/) })]);
    // The whole snapshot, in the coding the client was answered in (each version is compressed once per coding).
    const whole = await rawRequest(`${h.service.evalUrl}/v1/snapshot`, {
      headers: { authorization: `Bearer ${project.serverKey}`, ...(taken[0].encoding ? { 'accept-encoding': taken[0].encoding } : {}) },
    });
    expect(taken[0].length).toBe(whole.body.length);
  }, 60_000);

  it('replaces a bootstrap snapshot whole on its first refresh: nothing says the server served its content', async () => {
    run('shop');
    const served = await serverSnapshot();
    const seen = watch();
    const madeUp = { ...served.flags['banner-text'], valueOn: 'Made up' };
    const bootstrap = { ...served, version: served.version - 1, flags: { ...served.flags, 'banner-text': madeUp } };
    const client = local({ stream: false, pollIntervalMs: NO_POLLING, bootstrap });
    await expectSameAnswers(client, Object.keys(served.flags), 'replaced');
    expect(seen.map((r) => r.url)).toEqual(['/v1/snapshot']);
  });

  it('replaces a bootstrap at the version the server serves too: a 304 would confirm content nobody checked', async () => {
    run('shop');
    const served = await serverSnapshot();
    const seen = watch();
    const madeUp = { ...served.flags['banner-text'], valueOn: 'Made up' };
    const bootstrap = { ...served, flags: { ...served.flags, 'banner-text': madeUp } };
    const client = local({ stream: false, pollIntervalMs: NO_POLLING, bootstrap });
    expect((await nextEvent(client, 'change')).keys).toEqual(['banner-text']);
    await expectSameAnswers(client, Object.keys(served.flags), 'replaced');
    expect(seen.map((r) => [r.url, r.status])).toEqual([['/v1/snapshot', 200]]);
  });
});

/**
 * A network that can go down: from cut() on, snapshot requests fail, those in flight included (the server may
 * answer one after the changes a test makes while the network is down), the open stream is cut, and a new
 * stream waits for reconnect(). `streams` lists the query of each stream opened.
 */
function cuttableNetwork() {
  let down = false;
  let cuts = 0;
  let open: AbortController | null = null;
  let release = () => {};
  let released = Promise.resolve();
  const streams: Array<string | undefined> = [];
  const networkFetch: FetchFunction = async (input, init) => {
    const url = new URL(input);
    const failed = () => new TypeError('fetch failed (the network is down)');
    if (url.pathname === '/v1/snapshot') {
      if (down) throw failed();
      const sentBefore = cuts;
      const res = await fetch(input, init);
      if (cuts !== sentBefore) throw failed();
      return res;
    }
    if (url.pathname !== '/v1/stream') return fetch(input, init);
    await released;
    streams.push(url.search === '' ? undefined : url.search.slice(1));
    open = new AbortController();
    const signal = init?.signal ? AbortSignal.any([init.signal, open.signal]) : open.signal;
    return fetch(input, { ...init, signal });
  };
  return {
    fetch: networkFetch,
    streams,
    cut() {
      down = true;
      cuts++;
      released = new Promise<void>((resolve) => {
        release = resolve;
      });
      open?.abort();
    },
    /** Lets streams through again, and snapshot requests too unless `snapshots` is false. */
    reconnect(snapshots = true) {
      down = !snapshots;
      release();
    },
  };
}

/** A network that alters each stream event's data on its way (what a client cannot rule out): `garble` rewrites it. */
function garblingStream(garble: (data: string) => string): FetchFunction {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (new URL(input).pathname !== '/v1/stream' || res.body === null) return res;
    const lines = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(
      new TransformStream<string, string>({
        transform: (chunk, controller) => controller.enqueue(chunk.replace(/^data: (.*)$/gm, (_, data: string) => `data: ${garble(data)}`)),
      }),
    );
    return new Response(lines.pipeThrough(new TextEncoderStream()), { status: res.status, headers: res.headers });
  };
}
