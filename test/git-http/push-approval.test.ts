import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { gitAsync } from './git-async.js';

/**
 * What requireApproval keeps as a proposal through the API may not reach main by a push of the same actor
 * type: each is refused, naming the file and saying to propose it, and main stays where it was.
 */
describe('a push by an actor type that needs approval', () => {
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let project: Json;
  let work = '';
  let n = 0;

  const main = () => git(svc.gitdir(), 'rev-parse', 'refs/heads/main');

  async function clone(key: string): Promise<string> {
    const checkout = path.join(work, `checkout-${n++}`);
    const url = `${svc.controlUrl.replace('://', `://engineer:${key}@`)}/git/acme.git`;
    const cloned = await gitAsync(work, 'clone', '--quiet', url, checkout);
    if (!cloned.ok) throw new Error(cloned.stderr);
    return checkout;
  }

  function write(checkout: string, file: string, content: string): void {
    mkdirSync(path.dirname(path.join(checkout, file)), { recursive: true });
    writeFileSync(path.join(checkout, file), content);
  }

  async function commitAndPush(checkout: string, message: string) {
    git(checkout, 'add', '-A');
    git(checkout, 'commit', '--quiet', '-m', message);
    return gitAsync(checkout, 'push', 'origin', 'HEAD:main');
  }

  const flagFile = (key: string) => `id: ${key}-id-${n}\nkey: ${key}\nname: ${key}\nkind: boolean\narchivedAt: null\n`;
  const config = (enabled: boolean, rolloutPct: number) =>
    `enabled: ${enabled}\nrolloutPct: ${rolloutPct}\nvalueOn: true\nvalueOff: false\nversion: 1\nrules: []\n`;

  /** A new flag with its three configs, prod as given. */
  function newFlag(checkout: string, key: string, prod: string): void {
    write(checkout, `projects/shop/flags/${key}.yaml`, flagFile(key));
    for (const env of ['dev', 'staging']) write(checkout, `projects/shop/environments/${env}/${key}.yaml`, config(true, 100));
    write(checkout, `projects/shop/environments/prod/${key}.yaml`, prod);
  }

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-push-approval-'));
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    project = await createProject(admin, 'shop');
    await createFlag(admin, project.id, { key: 'checkout' });
    expect((await admin.put(`/api/v1/projects/${project.id}/segments/beta`, { userIds: ['u-1'] })).status).toBe(201);
    expect((await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['agent'] } })).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it('is refused for a segment change, which the API keeps as a proposal since a segment acts in every environment', async () => {
    const segment = (await agent.put(`/api/v1/projects/${project.id}/segments/beta`, { userIds: ['u-1', 'u-2'] })).body;
    expect(segment.proposal).toMatchObject({ action: 'segment_update', status: 'open' });
    const checkout = await clone(svc.agent);
    const file = 'projects/shop/segments/beta.yaml';
    write(checkout, file, 'key: beta\nversion: 1\nuserIds:\n  - u-1\n  - u-2\n');
    const head = main();
    const pushed = await commitAndPush(checkout, 'add u-2 to beta');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain(`${file}: prod requires approval of agent changes in project shop`);
    expect(pushed.stderr).toContain('propose it through the API or MCP');
    expect(main()).toBe(head);
  });

  it('is refused for a new segment and a deleted one', async () => {
    const checkout = await clone(svc.agent);
    write(checkout, 'projects/shop/segments/staff.yaml', 'key: staff\nversion: 1\nuserIds:\n  - u-9\n');
    const head = main();
    const added = await commitAndPush(checkout, 'a staff segment');
    expect(added.ok).toBe(false);
    expect(added.stderr).toContain('projects/shop/segments/staff.yaml: prod requires approval of agent changes');
    git(checkout, 'reset', '--quiet', '--hard', 'origin/main');
    unlinkSync(path.join(checkout, 'projects/shop/segments/beta.yaml'));
    const deleted = await commitAndPush(checkout, 'drop beta');
    expect(deleted.ok).toBe(false);
    expect(deleted.stderr).toContain('projects/shop/segments/beta.yaml: prod requires approval of agent changes');
    expect(main()).toBe(head);
  });

  it('is refused for a new flag whose config in the protected environment is not off at 0 %', async () => {
    const checkout = await clone(svc.agent);
    newFlag(checkout, 'instant-on', config(true, 100));
    const head = main();
    const pushed = await commitAndPush(checkout, 'a new flag, on in prod');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain('projects/shop/environments/prod/instant-on.yaml: prod requires approval of agent changes');
    expect(main()).toBe(head);
    const lookup = await agent.get('/api/v1/flags/lookup?projectSlug=shop&key=instant-on');
    expect(lookup.status).toBe(404);
  });

  it('accepts a new flag that is off at 0 % in the protected environment (what the API creates), on elsewhere', async () => {
    const checkout = await clone(svc.agent);
    newFlag(checkout, 'quietly-new', config(false, 0));
    const pushed = await commitAndPush(checkout, 'a new flag, off in prod');
    expect(pushed.stderr).not.toContain('remote: error');
    expect(pushed.ok).toBe(true);
    const flag = (await agent.get('/api/v1/flags/lookup?projectSlug=shop&key=quietly-new')).body;
    expect(flag.environments.prod).toMatchObject({ enabled: false, rolloutPct: 0 });
    expect(flag.environments.dev).toMatchObject({ enabled: true, rolloutPct: 100 });
  });

  it('is refused for a new flag off at 0 % in the protected environment with a schedule that turns it on later', async () => {
    const checkout = await clone(svc.agent);
    const scheduled = `${config(false, 0)}schedule:\n  - at: "2099-01-01T00:00:00.000Z"\n    set:\n      enabled: true\n      rolloutPct: 100\n`;
    newFlag(checkout, 'later-on', scheduled);
    const head = main();
    const pushed = await commitAndPush(checkout, 'a new flag, off in prod until its schedule turns it on');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain('projects/shop/environments/prod/later-on.yaml: prod requires approval of agent changes');
    expect(main()).toBe(head);
  });

  it('is refused for a flag created archived, which serves its defaultValue in the protected environment too', async () => {
    const checkout = await clone(svc.agent);
    newFlag(checkout, 'born-archived', config(false, 0));
    const file = 'projects/shop/flags/born-archived.yaml';
    write(
      checkout,
      file,
      `id: born-archived-id\nkey: born-archived\nkind: boolean\ndefaultValue: true\narchivedAt: "2026-01-01T00:00:00.000Z"\n`,
    );
    const head = main();
    const pushed = await commitAndPush(checkout, 'a new flag, archived, serving true');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain(
      `${file}: prod requires approval of agent changes in project shop (an archive acts in every environment)`,
    );
    expect(main()).toBe(head);
  });

  /** An agent's push of one edit of an archived flag's file: refused as its archive would be, main where it was. */
  async function archivedFlagEditRefused(key: string, edit: (text: string) => string, message: string): Promise<void> {
    const archived = await createFlag(admin, project.id, { key });
    expect((await admin.delete(`/api/v1/flags/${archived.id}`)).status).toBe(200);
    const checkout = await clone(svc.agent);
    const file = `projects/shop/flags/${key}.yaml`;
    write(checkout, file, edit(readFileSync(path.join(checkout, file), 'utf8')));
    const head = main();
    const pushed = await commitAndPush(checkout, message);
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain(
      `${file}: prod requires approval of agent changes in project shop (an archive acts in every environment)`,
    );
    expect(main()).toBe(head);
  }

  it('is refused for a flag taken out of the archive, as its archive would be', () =>
    archivedFlagEditRefused('retired', (text) => text.replace(/^archivedAt: .*$/m, 'archivedAt: null'), 'bring retired back'));

  it("is refused for a change to an archived flag's defaultValue, which every environment serves", () =>
    archivedFlagEditRefused(
      'shelved',
      (text) => (/^defaultValue:/m.test(text) ? text.replace(/^defaultValue: .*$/m, 'defaultValue: true') : `${text}defaultValue: true\n`),
      'serve true from the archive',
    ));

  it('holds every commit of a push to the policy, not only the push as a whole: a change undone later was still made on main', async () => {
    const checkout = await clone(svc.agent);
    const prod = 'projects/shop/environments/prod/checkout.yaml';
    const before = readFileSync(path.join(checkout, prod), 'utf8');
    write(checkout, prod, before.replace(/^rolloutPct: .*$/m, 'rolloutPct: 50'));
    git(checkout, 'commit', '--quiet', '-am', 'prod to 50 %');
    write(checkout, prod, before);
    git(checkout, 'commit', '--quiet', '-am', 'and back');
    const head = main();
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain(`${prod}: prod requires approval of agent changes in project shop`);
    // One line for the file, though two commits change it.
    expect(pushed.stderr.split(`remote: ${prod}:`).length - 1).toBe(1);
    expect(main()).toBe(head);

    // A flag deleted and added again, in two commits of one push: the deletion is on main's line too.
    const again = await clone(svc.agent);
    const flag = 'projects/shop/flags/checkout.yaml';
    const base = git(again, 'rev-parse', 'HEAD');
    git(
      again,
      'rm',
      '--quiet',
      '-r',
      flag,
      'projects/shop/environments/dev/checkout.yaml',
      'projects/shop/environments/staging/checkout.yaml',
      prod,
    );
    git(again, 'commit', '--quiet', '-m', 'delete checkout');
    git(again, 'checkout', '--quiet', base, '--', 'projects');
    git(again, 'commit', '--quiet', '-m', 'add checkout again');
    const readded = await gitAsync(again, 'push', 'origin', 'HEAD:main');
    expect(readded.ok).toBe(false);
    expect(readded.stderr).toContain(`remote: ${flag}: an agent key may not`);
    expect(main()).toBe(head);
  });

  it('lets an admin key push what an agent key may not: the policy names agent only', async () => {
    const checkout = await clone(svc.admin);
    newFlag(checkout, 'admin-on', config(true, 100));
    const file = 'projects/shop/segments/beta.yaml';
    write(checkout, file, 'key: beta\nversion: 1\nuserIds:\n  - u-1\n  - u-3\n');
    const pushed = await commitAndPush(checkout, 'admin: a flag on in prod, u-3 in beta');
    expect(pushed.ok).toBe(true);
    expect((await admin.get('/api/v1/flags/lookup?projectSlug=shop&key=admin-on')).body.environments.prod.enabled).toBe(true);
  });

  it('refuses the deletion of a flag that is not archived where the policy names the pusher, and lets an archived one go', async () => {
    const vault = await createProject(admin, 'vault');
    const live = await createFlag(admin, vault.id, { key: 'live' });
    const retired = await createFlag(admin, vault.id, { key: 'retired' });
    expect((await admin.put(`/api/v1/flags/${live.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    expect((await admin.delete(`/api/v1/flags/${retired.id}`)).status).toBe(200);
    expect((await admin.patch(`/api/v1/projects/${vault.id}`, { requireApproval: { prod: ['agent', 'admin'] } })).status).toBe(200);
    const filesOf = (key: string) => [
      `projects/vault/flags/${key}.yaml`,
      ...['dev', 'staging', 'prod'].map((env) => `projects/vault/environments/${env}/${key}.yaml`),
    ];
    const checkout = await clone(svc.admin);
    git(checkout, 'rm', '--quiet', ...filesOf('live'));
    const head = main();
    const deleted = await commitAndPush(checkout, 'delete live');
    expect(deleted.ok).toBe(false);
    expect(deleted.stderr).toContain(
      'remote: projects/vault/flags/live.yaml: prod requires approval of admin changes in project vault, and the flag is not archived',
    );
    expect(main()).toBe(head);
    expect((await admin.get('/api/v1/flags/lookup?projectSlug=vault&key=live')).body.environments.prod.enabled).toBe(true);

    git(checkout, 'reset', '--quiet', '--hard', 'origin/main');
    git(checkout, 'rm', '--quiet', ...filesOf('retired'));
    const cleaned = await commitAndPush(checkout, 'delete retired');
    expect(cleaned.stderr).not.toContain('requires approval');
    expect(cleaned.ok).toBe(true);
    expect((await admin.get('/api/v1/flags/lookup?projectSlug=vault&key=retired')).status).toBe(404);
  });

  describe('a proposal branch pushed into main', () => {
    let flag: Json;
    let adminPrefix = '';

    beforeAll(async () => {
      flag = await createFlag(admin, project.id, { key: 'proposed' });
      adminPrefix = ((await admin.get('/api/v1/keys')).body.keys as Json[]).find((k) => k.kind === 'admin').prefix;
    });

    /** The agent's prod change, kept as a proposal: its id and commit (the head of proposals/<id>). */
    async function propose(rolloutPct: number): Promise<{ id: string; commit: string }> {
      const res = await agent.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct });
      expect(res.body.proposal).toMatchObject({ status: 'open' });
      return { id: res.body.proposal.id, commit: res.body.proposal.commit };
    }
    const proposal = async (id: string) => (await admin.get(`/api/v1/proposals/${id}`)).body;
    const prodRollout = async () => (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.rolloutPct;
    const pushBranch = (checkout: string, id: string) => gitAsync(checkout, 'push', 'origin', `origin/proposals/${id}:refs/heads/main`);

    it('fast-forwarded by an admin key is merged, decided by that key, and served', async () => {
      const { id, commit } = await propose(20);
      const checkout = await clone(svc.admin);
      const pushed = await pushBranch(checkout, id);
      expect(pushed.stderr).not.toContain('trailer');
      expect(pushed.ok).toBe(true);
      expect(main()).toBe(commit);
      expect(await proposal(id)).toMatchObject({
        status: 'merged',
        mergedAs: commit,
        decidedBy: { type: 'admin', keyPrefix: adminPrefix },
      });
      expect(await prodRollout()).toBe(20);
    });

    it('merged by an admin key in a merge commit is merged, decided by the merge commit’s author', async () => {
      const { id } = await propose(30);
      const checkout = await clone(svc.admin);
      git(checkout, 'merge', '--quiet', '--no-ff', `origin/proposals/${id}`, '-m', `merge proposal ${id}`);
      const merge = git(checkout, 'rev-parse', 'HEAD');
      const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
      expect(pushed.stderr).not.toContain('trailer');
      expect(pushed.ok).toBe(true);
      expect(await proposal(id)).toMatchObject({ status: 'merged', mergedAs: merge, decidedBy: { type: 'git', name: 'Erin Engineer' } });
      expect(await prodRollout()).toBe(30);
    });

    it('by the actor type the policy holds back is refused as its own change would be, and the proposal stays open', async () => {
      const { id } = await propose(40);
      const head = main();
      const pushed = await pushBranch(await clone(svc.agent), id);
      expect(pushed.ok).toBe(false);
      expect(pushed.stderr).toContain(
        'projects/shop/environments/prod/proposed.yaml: prod requires approval of agent changes in project shop',
      );
      expect(pushed.stderr).not.toContain('trailer');
      expect(main()).toBe(head);
      expect(await proposal(id)).toMatchObject({ status: 'open' });
      expect((await admin.post(`/api/v1/proposals/${id}/reject`, {})).status).toBe(200);
    });

    it('after its rejection is refused: the trailers of a rejected proposal’s commits are not taken', async () => {
      const { id, commit } = await propose(50);
      expect((await admin.post(`/api/v1/proposals/${id}/reject`, {})).status).toBe(200);
      const head = main();
      const checkout = await clone(svc.admin);
      const pushed = await pushBranch(checkout, id);
      expect(pushed.ok).toBe(false);
      expect(pushed.stderr).toContain(`commit ${commit.slice(0, 12)}: its message carries a Flagops-`);
      expect(main()).toBe(head);
      expect(await proposal(id)).toMatchObject({ status: 'rejected' });
    });
  });
});
