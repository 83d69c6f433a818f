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

  it('refuses a push changing another file of the held-back flag, as the API refuses the write, naming the invalid file', async () => {
    const prodFile = 'projects/web/environments/prod/banner.yaml';
    const changed = await clone(svc.admin);
    edit(changed, prodFile, /^rolloutPct: .*$/m, 'rolloutPct: 61');
    const before = main();
    const refused = await push(changed);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain('remote: flagops: push refused');
    expect(refused.stderr).toContain(
      `remote: ${prodFile}: flag "banner" is held back by an invalid file on main (${WEB_BANNER}:1: /enabled: must be a boolean); fix or revert that file first`,
    );
    expect(main()).toBe(before);
    const banner = (await admin.get('/api/v1/flags/lookup?projectSlug=web&key=banner')).body;
    const api = await admin.put(`/api/v1/flags/${banner.id}/environments/prod/config`, { rolloutPct: 61 });
    expect([api.status, api.body.error?.code]).toEqual([409, 'invalid_in_repository']);
  });

  it('takes a kill of the held-back flag pushed in kills.yaml, as the API takes a kill', async () => {
    const killed = await clone(svc.admin);
    writeFileSync(
      path.join(killed, 'projects/web/environments/prod/kills.yaml'),
      'kills:\n  banner:\n    killedAt: 2026-01-02T10:00:00.000Z\n    killedBy: erin\n',
    );
    git(killed, 'add', '-A');
    git(killed, 'commit', '--quiet', '-m', 'kill banner');
    const pushed = await push(killed);
    expect(pushed.ok, pushed.stderr).toBe(true);
    const banner = (await admin.get('/api/v1/flags/lookup?projectSlug=web&key=banner')).body;
    expect(banner.environments.prod.killed).toBe(true);
  });

  it('takes the push that fixes it, and the file is no longer reported', async () => {
    const fix = await clone(svc.admin);
    edit(fix, WEB_BANNER, /^enabled: .*$/m, 'enabled: true');
    // With the fix, a change of another file of the flag is served: taken.
    edit(fix, 'projects/web/environments/staging/banner.yaml', /^rolloutPct: .*$/m, 'rolloutPct: 62');
    const pushed = await push(fix);
    expect(pushed.ok, pushed.stderr).toBe(true);
    expect(JSON.stringify((await admin.get('/api/v1/invalid-files')).body)).not.toContain(WEB_BANNER);
    const banner = (await admin.get('/api/v1/flags/lookup?projectSlug=web&key=banner')).body;
    expect(banner.environments.staging.rolloutPct).toBe(62);
  });
});

// A project.yaml that is invalid on main holds back its whole project: a push changing any of its files but a
// kills.yaml is refused naming it, and pushes to every other project are checked and taken as usual.
describe('a push while main holds an invalid project.yaml someone put there past the check', () => {
  let svc: TestService;
  let admin: HttpClient;
  let work: string;
  let n = 0;
  const MART = 'projects/mart/project.yaml';
  const MART_CART = 'projects/mart/environments/dev/cart.yaml';

  const clone = async (): Promise<string> => {
    const dir = path.join(work, `checkout-${n++}`);
    const url = `${svc.controlUrl.replace('://', `://engineer:${svc.admin}@`)}/git/acme.git`;
    const cloned = await gitAsync(work, 'clone', '--quiet', url, dir);
    if (!cloned.ok) throw new Error(cloned.stderr);
    return dir;
  };
  const edit = (checkout: string, file: string, from: RegExp, to: string) => {
    writeFileSync(path.join(checkout, file), readFileSync(path.join(checkout, file), 'utf8').replace(from, to));
    git(checkout, 'commit', '--quiet', '-am', `edit ${file}`);
  };
  /** As the operator's push on disk would: straight onto main, unchecked. */
  const breakOnDisk = async (text: (before: string) => string) => {
    const checkout = await clone();
    edit(checkout, MART, /^[\s\S]*$/, text(readFileSync(path.join(checkout, MART), 'utf8')));
    git(checkout, 'push', '--quiet', svc.gitdir(), 'HEAD:refs/heads/tmp');
    git(svc.gitdir(), 'update-ref', 'refs/heads/main', git(checkout, 'rev-parse', 'HEAD'));
    git(svc.gitdir(), 'update-ref', '-d', 'refs/heads/tmp');
  };
  const push = (checkout: string) => gitAsync(checkout, 'push', 'origin', 'HEAD:main');
  const main = () => git(svc.gitdir(), 'rev-parse', 'main');

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-push-held-project-'));
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    await createFlag(admin, (await createProject(admin, 'shop')).id, { key: 'checkout' });
    await createFlag(admin, (await createProject(admin, 'mart')).id, { key: 'cart' });
  });
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it('with unreadable YAML in it: takes a push to another project, refuses one to the held-back project naming the file', async () => {
    await breakOnDisk((text) => text.replace(/^name: .*$/m, 'name: [broken'));
    const other = await clone();
    edit(other, SHOP_CHECKOUT, /^rolloutPct: .*$/m, 'rolloutPct: 47');
    const pushed = await push(other);
    expect(pushed.ok, pushed.stderr).toBe(true);
    expect(main()).toBe(git(other, 'rev-parse', 'HEAD'));

    const held = await clone();
    edit(held, MART_CART, /^rolloutPct: .*$/m, 'rolloutPct: 48');
    const refused = await push(held);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toMatch(
      new RegExp(
        `remote: ${MART_CART}: flag "cart" is held back by an invalid file on main \\(${MART}:\\d+: YAML syntax error: .*\\); fix or revert that file first`,
      ),
    );
    expect(refused.stderr).not.toContain('JSON');
    expect(main()).toBe(git(other, 'rev-parse', 'HEAD'));
  });

  it('failing the schema: refuses a push changing a flag of the project, takes a kill, and takes the push that fixes it', async () => {
    await breakOnDisk((text) => text.replace(/^name: .*$/m, 'name: Mart\nrequireApproval: 5'));
    const held = await clone();
    edit(held, MART_CART, /^rolloutPct: .*$/m, 'rolloutPct: 49');
    const before = main();
    const refused = await push(held);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toMatch(
      new RegExp(
        `remote: ${MART_CART}: flag "cart" is held back by an invalid file on main \\(${MART}:\\d+: /requireApproval: must be an object\\); fix or revert that file first`,
      ),
    );
    expect(main()).toBe(before);

    const killed = await clone();
    writeFileSync(
      path.join(killed, 'projects/mart/environments/dev/kills.yaml'),
      'kills:\n  cart:\n    killedAt: 2026-01-02T10:00:00.000Z\n    killedBy: erin\n',
    );
    git(killed, 'add', '-A');
    git(killed, 'commit', '--quiet', '-m', 'kill cart');
    const kill = await push(killed);
    expect(kill.ok, kill.stderr).toBe(true);
    const cart = () => admin.get('/api/v1/flags/lookup?projectSlug=mart&key=cart');
    expect((await cart()).body.environments.dev.killed).toBe(true);

    const fixed = await clone();
    edit(fixed, MART, /^requireApproval: 5\n/m, '');
    edit(fixed, MART_CART, /^rolloutPct: .*$/m, 'rolloutPct: 49');
    const taken = await push(fixed);
    expect(taken.ok, taken.stderr).toBe(true);
    expect((await cart()).body.environments.dev).toMatchObject({ rolloutPct: 49, killed: true });
    expect((await cart()).body.invalidFiles).toBeUndefined();
  });
});
