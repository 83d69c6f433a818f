import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { until } from '../helpers/deadlines.js';
import { pushEdit } from '../helpers/git-cli.js';
import { httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

const METRICS_TOKEN = 'operators-only-token-0123456789';
const BROKEN = 'projects/secret-project/environments/prod/hidden-flag.yaml';

async function health(url: string, credential?: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${url}/healthz`, credential ? { headers: { authorization: `Bearer ${credential}` } } : {});
  return { status: res.status, body: (await res.json()) as Json };
}

describe('/healthz between organisations', () => {
  let svc: TestService;
  let urls: string[];

  beforeAll(async () => {
    svc = await startTestService({ orgs: ['acme', 'globex'], metrics: { enabled: true, token: METRICS_TOKEN } });
    urls = [svc.controlUrl, svc.evalUrl];
    const admin = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(admin, 'secret-project');
    await createFlag(admin, project.id, { key: 'hidden-flag' });
    pushEdit(svc.gitdir('acme'), (checkout) => writeFileSync(path.join(checkout, BROKEN), 'enabled: maybe\n'));
    await until(
      async () => (await health(svc.controlUrl, svc.admin)).body.status,
      (status) => status === 'degraded',
    );
  }, 60_000);
  afterAll(() => svc.stop());

  it('answers the status alone without a credential: no organisation, commit or file name', async () => {
    for (const url of urls) {
      const { status, body } = await health(url);
      expect(status).toBe(200);
      expect(body).toEqual({ status: 'degraded' });
    }
  });

  it("shows an admin key its own organisation's details, and no other's", async () => {
    for (const url of urls) {
      const own = await health(url, svc.orgs.acme.admin);
      expect(own.body.organisations).toEqual([
        {
          org: 'acme',
          commit: expect.stringMatching(/^[0-9a-f]{40}$/),
          invalidFiles: expect.arrayContaining([expect.objectContaining({ file: BROKEN })]),
        },
      ]);
      const other = await health(url, svc.orgs.globex.admin);
      expect(other.body.status).toBe('degraded');
      expect(other.body.organisations).toEqual([{ org: 'globex', commit: null, invalidFiles: [] }]);
      expect(JSON.stringify(other.body)).not.toContain('secret-project');
    }
  });

  it("shows the metrics token's holder every organisation", async () => {
    for (const url of urls) {
      const { body } = await health(url, METRICS_TOKEN);
      expect(body.organisations.map((o: Json) => o.org).sort()).toEqual(['acme', 'globex']);
    }
  });

  it('refuses any other credential with 401 and the error body, saying what the details need', async () => {
    const sdk = (
      await httpClient(svc.controlUrl, svc.admin).post('/api/v1/keys', {
        kind: 'sdk',
        projectId: (await httpClient(svc.controlUrl, svc.admin).get('/api/v1/projects')).body.projects[0].id,
        environment: 'prod',
      })
    ).body.key;
    for (const url of urls) {
      for (const credential of [svc.agent, sdk, 'svc_adm_not-a-real-key-0000000000000']) {
        const { status, body } = await health(url, credential);
        expect(status).toBe(401);
        expect(body.error).toEqual({
          code: 'unauthorized',
          message: expect.stringContaining('an admin key of the organisation or the metrics token'),
        });
      }
    }
  });
});
