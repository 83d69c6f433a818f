import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { createFlag, createProject } from './fixtures.js';

describe('archiving a flag with an agent key', () => {
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let open: Json;
  let guarded: Json;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    open = await createProject(admin, 'open');
    guarded = await createProject(admin, 'guarded');
    expect((await admin.patch(`/api/v1/projects/${guarded.id}`, { requireApproval: { prod: ['agent'] } })).status).toBe(200);
  });
  afterAll(() => svc?.stop());

  it('is refused (403) in a project that requires no approval of agents', async () => {
    const flag = await createFlag(admin, open.id, { key: 'old-banner' });
    const res = await agent.delete(`/api/v1/flags/${flag.id}`);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect((await agent.get(`/api/v1/flags/${flag.id}`)).body.archivedAt).toBeNull();
  });

  it('becomes a proposal (202) where the project requires approval of agents, archived once an admin approves it', async () => {
    const flag = await createFlag(admin, guarded.id, { key: 'old-checkout', defaultValue: true });
    const res = await agent.delete(`/api/v1/flags/${flag.id}`);
    expect(res.status).toBe(202);
    const { proposal } = res.body;
    expect(proposal).toMatchObject({ status: 'open', projectSlug: 'guarded', flagKey: 'old-checkout', action: 'flag_archive' });
    expect((await agent.get(`/api/v1/flags/${flag.id}`)).body.archivedAt).toBeNull();
    // The agent cannot approve its own request; an admin can.
    expect((await agent.post(`/api/v1/proposals/${proposal.id}/approve`, {})).status).toBe(403);
    const approved = await admin.post(`/api/v1/proposals/${proposal.id}/approve`, {});
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('merged');
    expect((await agent.get(`/api/v1/flags/${flag.id}`)).body.archivedAt).toEqual(expect.any(String));
    const audit = await admin.get(`/api/v1/audit?flagId=${flag.id}&action=flag_archive`);
    expect(audit.body.entries[0]).toMatchObject({ action: 'flag_archive', proposalId: proposal.id });
  });

  it('archives at once with an admin key where only agents need approval', async () => {
    const flag = await createFlag(admin, guarded.id, { key: 'old-search' });
    const res = await admin.delete(`/api/v1/flags/${flag.id}`);
    expect(res.status).toBe(200);
    expect(res.body.archivedAt).toEqual(expect.any(String));
  });

  it('answers an agent the flag unchanged for the archive of a flag archived already, as anyone who may archive, making no commit', async () => {
    const flag = await createFlag(admin, guarded.id, { key: 'gone-already' });
    const archived = await admin.delete(`/api/v1/flags/${flag.id}`);
    const head = (await admin.get('/api/v1/audit?limit=1')).body.entries[0].id;
    const res = await agent.delete(`/api/v1/flags/${flag.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: flag.id, archivedAt: archived.body.archivedAt });
    expect((await admin.get('/api/v1/audit?limit=1')).body.entries[0].id).toBe(head);
    expect((await admin.get('/api/v1/proposals?status=open')).body.proposals.map((p: Json) => p.flagKey)).not.toContain('gone-already');
  });

  it('still refuses an agent the archive of a flag archived already where agents may not archive at all', async () => {
    const flag = await createFlag(admin, open.id, { key: 'gone-too' });
    await admin.delete(`/api/v1/flags/${flag.id}`);
    expect((await agent.delete(`/api/v1/flags/${flag.id}`)).status).toBe(403);
  });
});
