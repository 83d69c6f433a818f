import diagnostics from 'node:diagnostics_channel';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Replica, startReplica } from '../../src/apps/replica/start-replica.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { applyDelta, changeSequence, sequenceProjectFiles } from '../eval-server/change-sequence.js';
import { ADMIN_KEY, commitFiles, ORG } from '../eval-server/harness.js';
import { until } from '../helpers/deadlines.js';
import { type SdkHarness, startSdkHarness } from '../sdk/sdk-harness.js';

const VIEW_PATH = '/api/v1/replica/snapshots/prj_shop/prod';

describe('a replica following its upstream with deltas (docs/deployment.md, "Evaluation replicas")', () => {
  let h: SdkHarness;
  let replica: Replica;
  let dir: string;
  const fetches: Array<{ url: string; status?: number; length?: number }> = [];
  const onRequest = (message: unknown) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    if (!request.url?.startsWith(VIEW_PATH)) return;
    const entry: (typeof fetches)[number] = { url: request.url };
    fetches.push(entry);
    response.once('finish', () => {
      entry.status = response.statusCode;
      entry.length = Number(response.getHeader('content-length') ?? 0);
    });
  };
  const snapshotText = async (url: string, query = '') =>
    (await fetch(`${url}/v1/snapshot${query}`, { headers: { authorization: `Bearer ${h.key}` } })).text();
  const upstreamVersion = () => h.service.holder.view(ORG, 'prj_shop', 'prod')!.version;
  const replicaVersion = () => replica.holder.view(ORG, 'prj_shop', 'prod')?.version;

  beforeAll(async () => {
    h = await startSdkHarness();
    await commitFiles(h.repo, sequenceProjectFiles(), 'the segment and the flag naming it');
    await h.service.holder.served(ORG);
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-deltas-'));
    replica = await startReplica({
      upstreams: [h.service.controlUrl],
      token: ADMIN_KEY,
      host: '127.0.0.1',
      port: 0,
      dataDir: dir,
      logger: silentLogger,
      startTimeoutMs: 5_000,
    });
    await until(
      async () => replicaVersion(),
      (v) => v === upstreamVersion(),
    );
    diagnostics.subscribe('http.server.request.start', onRequest);
  });
  afterAll(async () => {
    diagnostics.unsubscribe('http.server.request.start', onRequest);
    await replica?.stop();
    await h?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('takes every change of the sequence as a delta and serves byte for byte what the control plane serves', async () => {
    const wholeView = (
      await (await fetch(`${h.service.controlUrl}${VIEW_PATH}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text()
    ).length;
    fetches.length = 0;
    for (const step of changeSequence()) {
      const before = JSON.parse(await snapshotText(replica.url));
      await step.run(h);
      await until(
        async () => replicaVersion(),
        (v) => v === upstreamVersion(),
      );
      const upstream = await snapshotText(h.service.evalUrl);
      expect(await snapshotText(replica.url), step.name).toBe(upstream);
      // The replica answers deltas of its own to its SDKs, the same as the control plane's.
      const delta = JSON.parse(await snapshotText(replica.url, `?since=${before.version}`));
      expect(delta.since, step.name).toBe(before.version);
      expect(applyDelta(before, delta), step.name).toEqual(JSON.parse(upstream));
    }
    const taken = fetches.filter((f) => f.status === 200);
    expect(taken.length).toBeGreaterThan(0);
    for (const fetched of fetches) expect(fetched.url).toMatch(/\?since=\d+$/);
    for (const fetched of taken) expect(fetched.length).toBeLessThan(wholeView / 2);
  });

  it('is answered the whole view for a since the control plane does not know', async () => {
    const res = await fetch(`${h.service.controlUrl}${VIEW_PATH}?since=0`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).not.toHaveProperty('since');
    expect(body).toMatchObject({ projectId: 'prj_shop', environment: 'prod', version: upstreamVersion() });
  });
});
