import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { until } from '../helpers/deadlines.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { POSTGRES_MISSING } from '../helpers/postgres.js';
import { type Cluster, type ControlPlane, startCluster } from './cluster.js';

describe.skipIf(POSTGRES_MISSING !== null)('a proposal approved through one control plane and rejected through another at once', () => {
  let cluster: Cluster;
  let a: ControlPlane;
  let b: ControlPlane;
  let project: Json;
  let agent: HttpClient;

  beforeAll(async () => {
    // Polled every second: a proposal opened through one control plane reaches the other by a fetch.
    cluster = await startCluster({ controlPlanes: 2, gitPollSeconds: 1 });
    [a, b] = cluster.controlPlanes;
    project = await createProject(a.api, 'shop');
    expect((await a.api.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['agent'] } })).status).toBe(200);
    agent = httpClient(a.url, (await a.api.post('/api/v1/keys', { kind: 'agent', name: 'deploy-bot' })).body.key);
  }, 120_000);
  afterAll(() => cluster?.stop(), 60_000);

  it('one decision wins, the other answers 409 conflict, and both control planes end with it', async () => {
    for (let round = 0; round < 4; round++) {
      const f = await createFlag(a.api, project.id, { key: `decided-${round}` });
      expect((await a.api.put(`/api/v1/flags/${f.id}/environments/prod/config`, { enabled: true, rolloutPct: 10 })).status).toBe(200);
      const proposed = await agent.put(`/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 20 });
      expect(proposed.status).toBe(202);
      const id: string = proposed.body.proposal.id;
      await until(
        () => b.api.get(`/api/v1/proposals/${id}`),
        (res) => res.status === 200,
      );
      const approve = () => a.api.post(`/api/v1/proposals/${id}/approve`);
      const reject = () => b.api.post(`/api/v1/proposals/${id}/reject`, { reason: 'no' });
      // Sent in either order: either decision may come first.
      const [approved, rejected] =
        round % 2 === 0 ? await Promise.all([approve(), reject()]) : (await Promise.all([reject(), approve()])).reverse();
      expect([approved.status, rejected.status].sort()).toEqual([200, 409]);
      const merged = approved.status === 200;
      expect((merged ? rejected : approved).body.error.code).toBe('conflict');
      const status = merged ? 'merged' : 'rejected';
      expect((merged ? approved : rejected).body.status).toBe(status);
      for (const cp of [a, b]) {
        await until(
          async () => (await cp.api.get(`/api/v1/proposals/${id}`)).body.status,
          (now) => now === status,
        );
        await until(
          async () => (await cp.api.get(`/api/v1/flags/${f.id}`)).body.environments.prod.rolloutPct,
          (pct) => pct === (merged ? 20 : 10),
        );
        const entries = (await cp.api.get(`/api/v1/audit?flagId=${f.id}&limit=20`)).body.entries as Json[];
        const decisions = entries.filter((e) => e.proposalId === id && e.action !== 'proposal_open').map((e) => e.action);
        expect(decisions, cp.name).toEqual([merged ? 'config_update' : 'proposal_reject']);
      }
    }
  });
});
