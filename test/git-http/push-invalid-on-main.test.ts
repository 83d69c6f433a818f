import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { gitAsync } from './git-async.js';

const WEB_BANNER = 'projects/web/environments/dev/banner.yaml';
const SHOP_CHECKOUT = 'projects/shop/environments/dev/checkout.yaml';

// docs/flags-repository.md, "An invalid file on main": it holds back only what it belongs to, and every later
// push to other flags and projects is taken as it would be without it.
describe('a push while main holds an invalid file someone put there past the check', () => {
  let svc: TestService;
  let admin: HttpClient;
  let work: string;
  let n = 0;

  const clone = async (key: string): Promise<string> => {
    const dir = path.join(work, `checkout-${n++}`);
    const url = `${svc.controlUrl.replace('://', `://engineer:${key}@`)}/git/acme.git`;
    const cloned = await gitAsync(work, 'clone', '--quiet', url, dir);
    if (!cloned.ok) throw new Error(cloned.stderr);
    return dir;
  };
  const edit = (checkout: string, file: string, from: RegExp, to: string) => {
    const text = readFileSync(path.join(checkout, file), 'utf8');
    writeFileSync(path.join(checkout, file), text.replace(from, to));
    git(checkout, 'commit', '--quiet', '-am', `edit ${file}`);
  };
  const push = (checkout: string) => gitAsync(checkout, 'push', 'origin', 'HEAD:main');
  const main = () => git(svc.gitdir(), 'rev-parse', 'main');

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-push-invalid-'));
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    await createFlag(admin, (await createProject(admin, 'shop')).id, { key: 'checkout' });
    await createFlag(admin, (await createProject(admin, 'web')).id, { key: 'banner' });
    // As a commit from the git host, or the operator's push on disk, would: straight onto main, unchecked.
    const checkout = await clone(svc.admin);
    edit(checkout, WEB_BANNER, /^enabled: .*$/m, 'enabled: maybe');
    git(checkout, 'push', '--quiet', svc.gitdir(), 'HEAD:refs/heads/tmp');
    git(svc.gitdir(), 'update-ref', 'refs/heads/main', git(checkout, 'rev-parse', 'HEAD'));
    git(svc.gitdir(), 'update-ref', '-d', 'refs/heads/tmp');
    for (let tries = 0; ; tries++) {
      const listed = (await admin.get('/api/v1/invalid-files')).body;
      if (JSON.stringify(listed).includes(WEB_BANNER)) break;
      if (tries > 100) throw new Error(`the invalid file is not reported: ${JSON.stringify(listed)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it('takes a valid change to another project, by an unlimited key and by a key limited to that project', async () => {
    const byAdmin = await clone(svc.admin);
    edit(byAdmin, SHOP_CHECKOUT, /^rolloutPct: .*$/m, 'rolloutPct: 30');
    const pushed = await push(byAdmin);
    expect(pushed.ok, pushed.stderr).toBe(true);
    expect(main()).toBe(git(byAdmin, 'rev-parse', 'HEAD'));

    const shopId = (await admin.get('/api/v1/projects')).body.projects.find((p: Json) => p.slug === 'shop').id;
    const created = await admin.post('/api/v1/keys', { kind: 'agent', projects: [shopId] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const byAgent = await clone(created.body.key);
    edit(byAgent, SHOP_CHECKOUT, /^rolloutPct: .*$/m, 'rolloutPct: 40');
    const agentPushed = await push(byAgent);
    expect(agentPushed.ok, agentPushed.stderr).toBe(true);
    expect(main()).toBe(git(byAgent, 'rev-parse', 'HEAD'));
  });

  it('refuses a push that changes the invalid file and leaves it invalid, or adds another, naming only those', async () => {
    const touched = await clone(svc.admin);
    edit(touched, WEB_BANNER, /^rolloutPct: .*$/m, 'rolloutPct: 10');
    const before = main();
    const refused = await push(touched);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain(`remote: ${WEB_BANNER}:1:10: /enabled: must be a boolean`);

    const added = await clone(svc.admin);
    edit(added, SHOP_CHECKOUT, /^enabled: .*$/m, 'enabled: perhaps');
    const addedRefused = await push(added);
    expect(addedRefused.ok).toBe(false);
    expect(addedRefused.stderr).toContain(`remote: ${SHOP_CHECKOUT}:1:10: /enabled: must be a boolean`);
    expect(addedRefused.stderr).not.toContain(WEB_BANNER);
    expect(main()).toBe(before);
  });

  it('takes the push that fixes it, and the file is no longer reported', async () => {
    const fix = await clone(svc.admin);
    edit(fix, WEB_BANNER, /^enabled: .*$/m, 'enabled: true');
    const pushed = await push(fix);
    expect(pushed.ok, pushed.stderr).toBe(true);
    expect(JSON.stringify((await admin.get('/api/v1/invalid-files')).body)).not.toContain(WEB_BANNER);
  });
});
