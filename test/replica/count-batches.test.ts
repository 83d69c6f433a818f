import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplicaCounts } from '../../src/apps/replica/replica-counts.js';
import { UpstreamClient } from '../../src/apps/replica/upstream-client.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

describe('count batches from replicas reach the stats exactly once', () => {
  let svc: TestService;
  let admin: HttpClient;
  let project: Json;
  let flag: Json;
  const total = async () => {
    const res = await admin.get(`/api/v1/flags/${flag.id}/environments/dev/stats?period=24h`);
    return res.body.series.reduce(
      (n: number, h: Json) => n + Object.values(h.variations as Record<string, number>).reduce((a, b) => a + b, 0),
      0,
    );
  };

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
  });
  afterAll(() => svc.stop());

  it('a batch retried after its answer was lost is counted once', async () => {
    const sent: string[] = [];
    let loseNext = true;
    // The first answer is lost on the way back, after upstream took the batch.
    const lossy: typeof fetch = async (input, init) => {
      sent.push(JSON.parse(String(init?.body)).batchId);
      const res = await fetch(input, init);
      if (loseNext) {
        loseNext = false;
        throw new TypeError('socket hang up');
      }
      return res;
    };
    const counts = new ReplicaCounts(new UpstreamClient({ origin: svc.controlUrl, token: svc.admin, fetch: lossy }), silentLogger);
    for (let i = 0; i < 7; i++) counts.record(project.id, 'dev', 'checkout', 'off');
    await counts.flush();
    expect(counts.unsent).toBe(7);
    counts.record(project.id, 'dev', 'checkout', 'off'); // waits behind the batch in flight
    await counts.flush();
    expect(sent[1]).toBe(sent[0]);
    expect(await total()).toBe(7);
    await counts.flush();
    expect(sent).toHaveLength(3);
    expect(sent[2]).not.toBe(sent[0]);
    expect(await total()).toBe(8);
    expect(counts.unsent).toBe(0);
  });

  it('a batch upstream refuses is dropped, not retried forever', async () => {
    const counts = new ReplicaCounts(new UpstreamClient({ origin: svc.controlUrl, token: svc.admin }), silentLogger);
    counts.record(project.id, 'dev', 'no-such-flag', 'on');
    await counts.flush();
    expect(counts.unsent).toBe(0);
  });

  it('the counts endpoint needs an admin key', async () => {
    const res = await httpClient(svc.controlUrl, svc.agent).post('/api/v1/replica/counts', { batchId: 'abcdefgh-1', scopes: [] });
    expect(res.status).toBe(403);
    expect((await httpClient(svc.controlUrl).get('/api/v1/replica/snapshots')).status).toBe(401);
  });
});
