import diagnostics from 'node:diagnostics_channel';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvalApp } from '../../src/apps/eval-server/eval-app.js';
import { SnapshotHolder } from '../../src/apps/eval-server/snapshot-holder.js';
import { attachStreamHub, streamHubFor } from '../../src/apps/eval-server/stream.js';
import { EvaluationCounter } from '../../src/features/stats/evaluation-counter.js';
import { TrackNameBound } from '../../src/features/stats/event-counts.js';
import { listen } from '../../src/foundations/http/serve.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { stateIn } from '../helpers/control-state.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { openRawStream } from './raw-stream.js';
import { killRequest, ORG, type SdkHarness, setConfig, startSdkHarness } from './sdk-harness.js';

const versionsOf = (events: Array<{ event: string; data: string }>) =>
  events.filter((e) => e.event === 'version').map((e) => JSON.parse(e.data).version as number);

describe('GET /v1/stream (docs/sdk.md, "Stream endpoint")', () => {
  let h: SdkHarness;
  const url = () => `${h.service.evalUrl}/v1/stream`;
  const currentVersion = () => h.service.holder.view(ORG, 'prj_shop', 'prod')!.version;

  beforeAll(async () => {
    h = await startSdkHarness();
  });
  afterAll(() => h?.stop());

  it('sends the current version on connect, as an SSE response browsers may read from any origin', async () => {
    const stream = await openRawStream(url(), { authorization: `Bearer ${h.key}`, origin: 'https://app.example' });
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.response.headers.get('cache-control')).toMatch(/no-cache/);
    expect(stream.response.headers.get('access-control-allow-origin')).toBe('*');
    await stream.until(() => stream.events.length >= 1);
    expect(stream.events[0]).toEqual({
      event: 'version',
      data: JSON.stringify({ version: currentVersion() }),
      id: String(currentVersion()),
    });
    stream.close();
  });

  it('takes the key from ?sdkKey= too, because EventSource cannot send headers', async () => {
    const stream = await openRawStream(`${url()}?sdkKey=${encodeURIComponent(h.key)}`);
    expect(stream.response.status).toBe(200);
    await stream.until(() => versionsOf(stream.events).length === 1);
    stream.close();
  });

  it('refuses a missing, unknown or non-sdk key with 401 and the { error: { code, message } } body', async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer svc_sdk_nope' },
      { authorization: 'Bearer svc_adm_evalserveradmin00000000000001' },
    ];
    for (const headers of attempts) {
      const res = await fetch(url(), { headers });
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('unauthorized');
    }
    expect((await fetch(`${url()}?sdkKey=svc_sdk_nope`)).status).toBe(401);
  });

  it('announces each new version as soon as the holder swaps it in: a config change, then a kill', async () => {
    const stream = await openRawStream(url(), { authorization: `Bearer ${h.key}` });
    await stream.until(() => versionsOf(stream.events).length === 1);
    await setConfig(h, 'max-items', { valueOn: 60, valueOff: 10 });
    await stream.until(() => versionsOf(stream.events).at(-1) === currentVersion());
    await h.kills.kill(killRequest(h, 'max-items'));
    // kill() resolves once the evaluation server serves the kill; the announcement went out in that same turn
    await stream.until(() => versionsOf(stream.events).at(-1) === currentVersion(), PROMPTLY_MS);
    const versions = versionsOf(stream.events);
    expect(versions).toHaveLength(3);
    expect(versions[1]).toBeGreaterThan(versions[0]);
    expect(versions[2]).toBeGreaterThan(versions[1]);
    await h.kills.clear(killRequest(h, 'max-items'));
    stream.close();
  });

  it("ends a revoked key's stream at once, long before a heartbeat, with no event after the revocation", async () => {
    const created = await h.service.keys.createKey(ORG, { kind: 'sdk', projectId: 'prj_shop', environment: 'prod' });
    const stream = await openRawStream(url(), { authorization: `Bearer ${created.key}` });
    await stream.until(() => versionsOf(stream.events).length === 1);
    await h.service.keys.revokeKey(ORG, created.id);
    await Promise.race([stream.ended, new Promise((_, reject) => setTimeout(() => reject(new Error('still open')), PROMPTLY_MS))]);
    await setConfig(h, 'max-items', { valueOn: 65, valueOff: 10 });
    expect(versionsOf(stream.events)).toHaveLength(1);
  });

  it('ends the stream of an expiring key at its expiry, not at the next heartbeat or event', async () => {
    const expiresAt = new Date(Date.now() + 1_500).toISOString();
    const created = await h.service.keys.createKey(ORG, { kind: 'sdk', projectId: 'prj_shop', environment: 'prod', expiresAt });
    const stream = await openRawStream(url(), { authorization: `Bearer ${created.key}` });
    await stream.until(() => versionsOf(stream.events).length === 1);
    await stream.ended;
    const endedAfterExpiry = Date.now() - Date.parse(expiresAt);
    expect(endedAfterExpiry).toBeGreaterThanOrEqual(-50); // clocks of timers and Date may differ by a few ms
    expect(endedAfterExpiry).toBeLessThan(1_000); // the heartbeat is 20 s
    expect(versionsOf(stream.events)).toHaveLength(1);
  });

  it('stays silent for changes to other environments', async () => {
    const stream = await openRawStream(url(), { authorization: `Bearer ${h.key}` });
    await stream.until(() => versionsOf(stream.events).length === 1);
    const [first] = versionsOf(stream.events);
    await setConfig(h, 'max-items', { valueOn: 70, valueOff: 10 }, 'dev');
    await h.kills.kill(killRequest(h, 'max-items', 'staging'));
    // Then a change to prod, announced on the same stream: events arrive in the order they were sent, so an
    // announcement of the dev change or the staging kill would have arrived before this one.
    await setConfig(h, 'max-items', { valueOn: 70, valueOff: 10 });
    await stream.until(() => versionsOf(stream.events).at(-1) === currentVersion(), PROMPTLY_MS);
    expect(versionsOf(stream.events)).toEqual([first, currentVersion()]);
    await h.kills.clear(killRequest(h, 'max-items', 'staging'));
    stream.close();
  });

  it('forgets a stream as soon as its client disconnects', async () => {
    const hub = streamHubFor(h.service.holder);
    await expect.poll(() => hub.size).toBe(0); // the earlier tests' streams are gone
    const stream = await openRawStream(url(), { authorization: `Bearer ${h.key}` });
    await stream.until(() => stream.events.length === 1);
    expect(hub.size).toBe(1);
    stream.close();
    await expect.poll(() => hub.size).toBe(0);
  });

  it('answers HEAD without holding the connection open', async () => {
    const res = await fetch(url(), { method: 'HEAD', headers: { authorization: `Bearer ${h.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  });
});

describe('stream lifetime', () => {
  it('ends every stream itself when the service stops, so stopping never waits for the socket grace', async () => {
    const h = await startSdkHarness();
    const port = Number(new URL(h.service.evalUrl).port);
    // The servers' socket grace, 2 s into a stop, destroys the sockets still open: a response cut that way
    // never finishes. A response the service ends itself does, and node:http announces it on this channel.
    const seen: string[] = [];
    const streams = new WeakSet<IncomingMessage>();
    const onStart = (message: unknown) => {
      const { request } = message as { request: IncomingMessage };
      if (request.socket.localPort === port && request.url?.startsWith('/v1/stream')) streams.add(request);
    };
    const onFinish = (message: unknown) => {
      if (streams.has((message as { request: IncomingMessage }).request)) seen.push('stream finished');
    };
    diagnostics.subscribe('http.server.request.start', onStart);
    diagnostics.subscribe('http.server.response.finish', onFinish);
    try {
      const stream = await openRawStream(`${h.service.evalUrl}/v1/stream`, { authorization: `Bearer ${h.key}` });
      await stream.until(() => stream.events.length === 1);
      await h.stop();
      seen.push('stop resolved');
      await stream.ended;
      expect(seen).toEqual(['stream finished', 'stop resolved']);
    } finally {
      diagnostics.unsubscribe('http.server.request.start', onStart);
      diagnostics.unsubscribe('http.server.response.finish', onFinish);
    }
  });

  describe('with a 50 ms heartbeat', () => {
    let h: SdkHarness;
    let dataDir: string;
    let counter: EvaluationCounter;
    let server: Awaited<ReturnType<typeof listen>>;
    let holder: SnapshotHolder;

    beforeAll(async () => {
      h = await startSdkHarness();
      // A second evaluation server over the same repository, with a hub whose heartbeat is quick to observe.
      dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-stream-'));
      counter = await EvaluationCounter.open({ state: await stateIn(dataDir) });
      holder = new SnapshotHolder(silentLogger);
      await holder.add(ORG, h.repo);
      attachStreamHub(holder, { heartbeatMs: 50 });
      const app = createEvalApp({
        keys: h.service.keys,
        holder,
        counter,
        trackNames: new TrackNameBound(counter),
        logger: silentLogger,
        health: () => ({ status: 200, body: {} }),
      });
      server = await listen(app, '127.0.0.1', 0);
    });
    afterAll(async () => {
      await server?.close();
      holder?.close();
      await counter?.close();
      await rm(dataDir, { recursive: true, force: true });
      await h?.stop();
    });

    it('sends heartbeat comments that SSE readers ignore', async () => {
      const stream = await openRawStream(`${server.url}/v1/stream`, { authorization: `Bearer ${h.key}` });
      await stream.until(() => (stream.text().match(/^: heartbeat$/gm) ?? []).length >= 2);
      expect(stream.events).toHaveLength(1);
      stream.close();
    });

    it('ends the streams of a revoked key at the next heartbeat', async () => {
      const created = await h.service.keys.createKey(ORG, { kind: 'sdk', projectId: 'prj_shop', environment: 'prod' });
      const stream = await openRawStream(`${server.url}/v1/stream`, { authorization: `Bearer ${created.key}` });
      await stream.until(() => stream.events.length === 1);
      await h.service.keys.revokeKey(ORG, created.id);
      await Promise.race([stream.ended, new Promise((_, reject) => setTimeout(() => reject(new Error('still open')), PROMPTLY_MS))]);
    });
  });
});
