import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { ManualClock } from '../schedule/manual-clock.js';
import { gitAsync } from './git-async.js';

const ON = (version: number) => `enabled: true\nrolloutPct: 100\nvalueOn: true\nvalueOff: false\nversion: ${version}\nrules: []\n`;

/** Pushes over /git by keys limited to a project or to environments: files outside the limits are refused, named. */
describe('a push by a limited key', () => {
  let svc: TestService;
  let admin: HttpClient;
  let work: string;
  let n = 0;
  const clock = new ManualClock(Date.parse('2026-11-26T10:00:00Z'));
  const keys: Record<string, string> = {};
  let checkoutId = '';

  beforeAll(async () => {
    svc = await startTestService({ clock });
    admin = httpClient(svc.controlUrl, svc.admin);
    const shop = await createProject(admin, 'shop');
    const web = await createProject(admin, 'web');
    checkoutId = (await createFlag(admin, shop.id, { key: 'checkout' })).id;
    await createFlag(admin, web.id, { key: 'banner' });
    const key = async (body: Json) => (await admin.post('/api/v1/keys', body)).body.key as string;
    keys.shopAgent = await key({ kind: 'agent', projects: [shop.id] });
    keys.devAgent = await key({ kind: 'agent', environments: ['dev'] });
    keys.shopAdmin = await key({ kind: 'admin', projects: [shop.id] });
    keys.shopDevAdmin = await key({ kind: 'admin', projects: [shop.id], environments: ['dev'] });
    keys.expiring = await key({ kind: 'agent', expiresAt: '2026-11-26T11:00:00Z' });
    keys.expiringAdmin = await key({ kind: 'admin', expiresAt: '2026-11-26T11:00:00Z' });
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-push-scope-'));
  });
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  async function clone(key: string): Promise<string> {
    const dir = path.join(work, `checkout-${n++}`);
    const cloned = await gitAsync(work, 'clone', '--quiet', `${svc.controlUrl.replace('://', `://engineer:${key}@`)}/git/acme.git`, dir);
    if (!cloned.ok) throw new Error(cloned.stderr);
    return dir;
  }

  function change(checkout: string, files: Record<string, string>): void {
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(checkout, file)), { recursive: true });
      writeFileSync(path.join(checkout, file), content);
    }
    git(checkout, 'add', '-A');
    git(checkout, 'commit', '--quiet', '-m', 'change');
  }

  const version = (project: string, env: string, flag: string) =>
    Number(/version: (\d+)/.exec(git(svc.gitdir(), 'show', `main:projects/${project}/environments/${env}/${flag}.yaml`))?.[1]);

  it('a project-limited key pushes into its project', async () => {
    const checkout = await clone(keys.shopAgent);
    change(checkout, { 'projects/shop/environments/dev/checkout.yaml': ON(version('shop', 'dev', 'checkout') + 1) });
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.stderr).not.toContain('outside');
    expect(pushed.ok).toBe(true);
  });

  it('a project-limited key may not touch another project: the push is refused naming the file, main does not move', async () => {
    const checkout = await clone(keys.shopAgent);
    const before = git(svc.gitdir(), 'rev-parse', 'main');
    change(checkout, {
      'projects/shop/environments/dev/checkout.yaml': ON(version('shop', 'dev', 'checkout') + 1),
      'projects/web/environments/dev/banner.yaml': ON(version('web', 'dev', 'banner') + 1),
    });
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain(
      'remote: projects/web/environments/dev/banner.yaml: outside what this key may change (it is limited to projects shop)',
    );
    expect(pushed.stderr).not.toContain('projects/shop/environments/dev/checkout.yaml:');
    expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(before);
  });

  it('a project-limited admin key may not add a project or a file outside projects/', async () => {
    const checkout = await clone(keys.shopAdmin);
    change(checkout, { 'projects/blog/project.yaml': 'id: prj_blog\nname: Blog\nslug: blog\n', 'README.md': 'hello\n' });
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain('remote: projects/blog/project.yaml: outside what this key may change');
    expect(pushed.stderr).toContain('remote: README.md: outside what this key may change');
  });

  it('an admin key that expires may not add a project, which would outlast it, as through the API', async () => {
    const checkout = await clone(keys.expiringAdmin);
    const before = git(svc.gitdir(), 'rev-parse', 'main');
    change(checkout, { 'projects/blog/project.yaml': 'id: prj_blog\nname: Blog\nslug: blog\n' });
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toMatch(
      /remote: projects\/blog\/project\.yaml: .*expiring at 2026-11-26T11:00:00\.000Z may not create projects: that reaches past its expiry/,
    );
    expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(before);
  });

  it('an environment-limited key pushes configs of its environments only', async () => {
    const checkout = await clone(keys.devAgent);
    change(checkout, { 'projects/web/environments/dev/banner.yaml': ON(version('web', 'dev', 'banner') + 1) });
    expect((await gitAsync(checkout, 'push', 'origin', 'HEAD:main')).ok).toBe(true);
    const refused = await clone(keys.devAgent);
    change(refused, { 'projects/web/environments/prod/banner.yaml': ON(version('web', 'prod', 'banner') + 1) });
    const pushed = await gitAsync(refused, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain(
      'remote: projects/web/environments/prod/banner.yaml: an agent key limited to environment dev may not update environment configs in prod',
    );
  });

  it('an environment-limited key may not edit a kill in another environment: the refusal names kills.yaml and says it is a kill there', async () => {
    expect((await admin.post(`/api/v1/flags/${checkoutId}/environments/prod/kill`, { reason: 'errors' })).status).toBe(200);
    const checkout = await clone(keys.devAgent);
    const kills = 'projects/shop/environments/prod/kills.yaml';
    change(checkout, { [kills]: git(checkout, 'show', `HEAD:${kills}`).replace(/killedBy: .*/, 'killedBy: someone else') });
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain(`remote: ${kills}: an agent key limited to environment dev may not kill flags in prod`);
    expect(pushed.stderr).not.toContain('environments/prod/checkout.yaml');
  });

  it('a key limited to environments may not change project.yaml: the refusal names it and says project settings act in every environment', async () => {
    const checkout = await clone(keys.shopDevAdmin);
    const file = 'projects/shop/project.yaml';
    change(checkout, { [file]: git(checkout, 'show', `HEAD:${file}`).replace(/^name: .*$/m, 'name: Shop3') });
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain(
      `remote: ${file}: changes name: an admin key limited to environment dev may not change a project's settings (name, requireApproval, budgets): that acts in every environment`,
    );
    expect(pushed.stderr).not.toContain('remote: projects/shop/:');
  });

  it("a project-limited admin key may change its project's name, as through the API, but not its id", async () => {
    const file = 'projects/shop/project.yaml';
    const renamed = await clone(keys.shopAdmin);
    const text = git(renamed, 'show', `HEAD:${file}`);
    change(renamed, { [file]: text.replace(/^name: .*$/m, 'name: Shop Two') });
    const ok = await gitAsync(renamed, 'push', 'origin', 'HEAD:main');
    expect(ok.ok, ok.stderr).toBe(true);
    const id = /^id: (.*)$/m.exec(text)![1];
    const newId = await clone(keys.shopAdmin);
    change(newId, { [file]: git(newId, 'show', `HEAD:${file}`).replace(/^id: .*$/m, 'id: prj_again') });
    const pushed = await gitAsync(newId, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain(`/id: changes the project's id ${id} → prj_again; ids are stable`);
    expect((await admin.get(`/api/v1/projects/${id}`)).body.name).toBe('Shop Two');
  });

  it('an environment-limited key adds a flag that is off outside its environments, as the API makes it, and no other', async () => {
    const OFF = 'enabled: false\nrolloutPct: 0\nvalueOn: true\nvalueOff: false\nversion: 1\nrules: []\n';
    const flagFile = (key: string) =>
      `id: flg_${key}000000000001\nkey: ${key}\nname: ${key}\nkind: boolean\ndefaultValue: false\narchivedAt: null\n`;
    const newFlag = (key: string, prod: string) => ({
      [`projects/web/flags/${key}.yaml`]: flagFile(key),
      [`projects/web/environments/dev/${key}.yaml`]: ON(1),
      [`projects/web/environments/staging/${key}.yaml`]: OFF,
      [`projects/web/environments/prod/${key}.yaml`]: prod,
    });
    const accepted = await clone(keys.devAgent);
    change(accepted, newFlag('quiet', OFF));
    const ok = await gitAsync(accepted, 'push', 'origin', 'HEAD:main');
    expect(ok.ok, ok.stderr).toBe(true);

    const before = git(svc.gitdir(), 'rev-parse', 'main');
    const scheduled = `${OFF}schedule:\n  - at: "2026-11-26T12:00:00Z"\n    set: { enabled: true, rolloutPct: 100 }\n`;
    // Off, but with an off value the API would not give it: a boolean serving true to everyone.
    const offServingTrue = OFF.replace('valueOff: false', 'valueOff: true');
    for (const [key, prod] of [
      ['loud', ON(1)],
      ['later', scheduled],
      ['inverted', offServingTrue],
    ]) {
      const refused = await clone(keys.devAgent);
      change(refused, newFlag(key, prod));
      const pushed = await gitAsync(refused, 'push', 'origin', 'HEAD:main');
      expect(pushed.ok).toBe(false);
      expect(pushed.stderr).toContain(
        `remote: projects/web/environments/prod/${key}.yaml: outside what this key may change (it is limited to environments dev); a new flag it adds stays off there`,
      );
      expect(pushed.stderr).not.toContain(`environments/dev/${key}.yaml:`);
      expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(before);
    }
  });

  it('an expired key can neither clone nor push: 401, and git is told why', async () => {
    const checkout = await clone(keys.expiring);
    clock.advance(2 * 3_600_000);
    change(checkout, { 'projects/web/environments/dev/banner.yaml': ON(version('web', 'dev', 'banner') + 1) });
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    const res = await fetch(`${svc.controlUrl}/git/acme.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${Buffer.from(`x:${keys.expiring}`).toString('base64')}` },
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as Json).error.message).toContain('expired at 2026-11-26T11:00:00.000Z');
  });
});
