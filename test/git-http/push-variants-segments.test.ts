import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { gitAsync } from './git-async.js';

const VARIANTS = 'variants:\n  - name: blue\n    value: true\n    weight: 40\n  - name: green\n    value: false\n    weight: 50\n';

describe('pushing variants and segments over git smart HTTP', () => {
  let svc: TestService;
  let admin: HttpClient;
  let project: Json;
  let work: string;
  const remote = (key: string) => `${svc.controlUrl.replace('://', `://engineer:${key}@`)}/git/acme.git`;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(admin, 'shop');
    await createFlag(admin, project.id, { key: 'checkout-v2' });
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-git-variants-'));
  });
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it('refuses weights that do not add up to 100 with file:line:column, and main does not move', async () => {
    const checkout = path.join(work, 'weights');
    expect((await gitAsync(work, 'clone', '--quiet', remote(svc.agent), checkout)).ok).toBe(true);
    const before = git(svc.gitdir(), 'rev-parse', 'main');
    const config = path.join(checkout, 'projects/shop/environments/prod/checkout-v2.yaml');
    writeFileSync(config, readFileSync(config, 'utf8') + VARIANTS);
    git(checkout, 'commit', '--quiet', '-am', 'a split that does not add up');
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toMatch(
      /projects\/shop\/environments\/prod\/checkout-v2\.yaml:\d+:3: \/variants: weights must add up to exactly 100/,
    );
    expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(before);
  });

  it('takes a segment file and a rule using it from an agent key, audited as segment_update', async () => {
    const checkout = path.join(work, 'segment');
    expect((await gitAsync(work, 'clone', '--quiet', remote(svc.agent), checkout)).ok).toBe(true);
    mkdirSync(path.join(checkout, 'projects/shop/segments'));
    writeFileSync(path.join(checkout, 'projects/shop/segments/beta-testers.yaml'), 'key: beta-testers\nuserIds: [ana, bo]\n');
    git(checkout, 'add', '.');
    git(checkout, 'commit', '--quiet', '-m', 'beta testers');
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok, pushed.stderr).toBe(true);
    const segment = (await admin.get(`/api/v1/projects/${project.id}/segments/beta-testers`)).body;
    expect(segment).toMatchObject({ key: 'beta-testers', userIds: ['ana', 'bo'] });
    const audit = (await admin.get('/api/v1/audit?action=segment_update&limit=1')).body.entries[0];
    expect(audit).toMatchObject({ action: 'segment_update', segmentKey: 'beta-testers', actor: { type: 'git' } });
  });
});
