import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { gitAsync } from '../git-http/git-async.js';
import { until } from '../helpers/deadlines.js';
import { git, pushEdit } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

/**
 * A config's (and a segment's) version moves with its content on every path: a push that changes the content
 * and leaves `version` as it was, or lowers it, is a new version all the same, so a write read before it
 * answers 409 instead of overwriting it. The engineer never has to remember a version.
 */
describe('versions move with content', () => {
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let project: Json;
  let work: string;
  let n = 0;

  const prodFile = (key: string) => `projects/shop/environments/prod/${key}.yaml`;
  const prod = async (flag: Json) => (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod;
  const shown = (file: string) => git(svc.gitdir(), 'show', `main:${file}`);

  /** An engineer's push over git over HTTP: clone, edit one file, commit, push. */
  async function pushOverHttp(file: string, edit: (text: string) => string): Promise<void> {
    const checkout = path.join(work, `c-${n++}`);
    const url = `${svc.controlUrl.replace('://', `://engineer:${svc.admin}@`)}/git/acme.git`;
    expect((await gitAsync(work, 'clone', '--quiet', url, checkout)).ok).toBe(true);
    writeFileSync(path.join(checkout, file), edit(readFileSync(path.join(checkout, file), 'utf8')));
    git(checkout, 'commit', '--quiet', '-am', `edit ${file}`);
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.stderr).not.toContain('remote: error');
    expect(pushed.ok).toBe(true);
  }

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-versions-'));
    svc = await startTestService({ keepDataDir: true });
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    project = await createProject(admin, 'shop');
  }, 60_000);
  afterAll(async () => {
    await svc.stop();
    rmSync(svc.dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('a push that changes a config and leaves its version is a new version: a write read before it is 409', async () => {
    const flag = await createFlag(admin, project.id, { key: 'checkout' });
    expect((await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 75 })).status).toBe(200);
    const read = await prod(flag);
    expect(read).toMatchObject({ rolloutPct: 75, version: 2 });

    await pushOverHttp(prodFile('checkout'), (text) => text.replace('rolloutPct: 75', 'rolloutPct: 40'));
    expect(shown(prodFile('checkout'))).toContain('version: 2');
    expect(await prod(flag)).toMatchObject({ rolloutPct: 40, version: 3 });

    const stale = await agent.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 10, expectedVersion: read.version });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'version_conflict', message: expect.stringContaining('current version 3') });
    expect(await prod(flag)).toMatchObject({ rolloutPct: 40, version: 3 });

    const fresh = await agent.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 10, expectedVersion: 3 });
    expect(fresh.status).toBe(200);
    expect(fresh.body.environments.prod).toMatchObject({ rolloutPct: 10, version: 4 });
    // The API writes the version it reports, so the file and the API agree again.
    expect(shown(prodFile('checkout'))).toContain('version: 4');
  });

  it('a push that lowers the version is a new version too, above every earlier one', async () => {
    const flag = await createFlag(admin, project.id, { key: 'lowered' });
    for (const rolloutPct of [10, 20, 30]) await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct });
    expect((await prod(flag)).version).toBe(4);
    pushEdit(svc.gitdir(), (checkout) => {
      const file = path.join(checkout, prodFile('lowered'));
      writeFileSync(file, readFileSync(file, 'utf8').replace('rolloutPct: 30', 'rolloutPct: 35').replace('version: 4', 'version: 1'));
    });
    const after = await until(
      () => prod(flag),
      (config) => config.rolloutPct === 35,
    );
    expect(after.version).toBe(5);
    // A push that raises it past the current one keeps what it says.
    pushEdit(svc.gitdir(), (checkout) => {
      const file = path.join(checkout, prodFile('lowered'));
      writeFileSync(file, readFileSync(file, 'utf8').replace('rolloutPct: 35', 'rolloutPct: 36').replace('version: 1', 'version: 9'));
    });
    expect(
      (
        await until(
          () => prod(flag),
          (config) => config.rolloutPct === 36,
        )
      ).version,
    ).toBe(9);
  });

  it('a segment pushed without a new version is a new version: a segment write read before it is 409', async () => {
    expect((await admin.put(`/api/v1/projects/${project.id}/segments/beta`, { userIds: ['u-1'] })).status).toBe(201);
    const read = (await admin.get(`/api/v1/projects/${project.id}/segments/beta`)).body;
    expect(read.version).toBe(1);
    await pushOverHttp('projects/shop/segments/beta.yaml', (text) => text.replace('[u-1]', '[u-1, u-2]'));
    const after = (await admin.get(`/api/v1/projects/${project.id}/segments/beta`)).body;
    expect(after).toMatchObject({ userIds: ['u-1', 'u-2'], version: 2 });
    const stale = await admin.put(`/api/v1/projects/${project.id}/segments/beta`, { userIds: ['u-3'], expectedVersion: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('version_conflict');
  });

  it('a flag deleted and added again, in one push or in two, is above every version it had: a write read before is 409', async () => {
    const flag = await createFlag(admin, project.id, { key: 'reborn' });
    for (const rolloutPct of [10, 20]) await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct });
    expect((await prod(flag)).version).toBe(3);
    const files = ['flags', 'environments/dev', 'environments/staging', 'environments/prod'].map(
      (dir) => `projects/shop/${dir}/reborn.yaml`,
    );
    const saved = files.map((file) => shown(file));
    const restore = (checkout: string) => {
      for (const [i, file] of files.entries()) writeFileSync(path.join(checkout, file), `${saved[i]}\n`);
    };
    // One push: deleted in a commit, added again in the next, as they were (version 3 in the file).
    pushEdit(svc.gitdir(), (checkout) => {
      for (const file of files) rmSync(path.join(checkout, file));
      git(checkout, 'commit', '--quiet', '-am', 'delete reborn');
      restore(checkout);
    });
    expect(
      (
        await until(
          () => prod(flag),
          (config) => config.version > 3,
        )
      ).version,
    ).toBe(4);
    const stale = await agent.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 50, expectedVersion: 3 });
    expect([stale.status, stale.body.error?.code]).toEqual([409, 'version_conflict']);

    // Two pushes, the file added again saying version 1: still above every version it had.
    pushEdit(svc.gitdir(), (checkout) => {
      for (const file of files) rmSync(path.join(checkout, file));
    });
    await until(
      async () => (await admin.get(`/api/v1/flags/${flag.id}`)).status,
      (status) => status === 404,
    );
    pushEdit(svc.gitdir(), (checkout) => {
      restore(checkout);
      const file = path.join(checkout, prodFile('reborn'));
      writeFileSync(file, readFileSync(file, 'utf8').replace(/version: \d+/, 'version: 1'));
    });
    expect(
      (
        await until(
          () => prod(flag),
          (config) => config !== undefined && config.version !== undefined,
        )
      ).version,
    ).toBe(5);
    for (const expectedVersion of [1, 3, 4]) {
      const old = await agent.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 60, expectedVersion });
      expect(old.status).toBe(409);
    }
  });

  it('a flag renamed in a push, its id kept in the file, keeps its versions: a write read before the rename is 409', async () => {
    const flag = await createFlag(admin, project.id, { key: 'old-name' });
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 10 });
    const read = await prod(flag);
    expect(read.version).toBe(2);
    const devBefore = (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.dev.version;
    pushEdit(svc.gitdir(), (checkout) => {
      for (const dir of ['flags', 'environments/dev', 'environments/staging', 'environments/prod'])
        git(checkout, 'mv', `projects/shop/${dir}/old-name.yaml`, `projects/shop/${dir}/new-name.yaml`);
      const flagFile = path.join(checkout, 'projects/shop/flags/new-name.yaml');
      writeFileSync(
        flagFile,
        `id: ${flag.id}\n${readFileSync(flagFile, 'utf8')
          .replace(/^id: .*\n/m, '')
          .replace('key: old-name', 'key: new-name')}`,
      );
      // Renamed with its rollout changed, the file's version left as it was.
      const config = path.join(checkout, prodFile('new-name'));
      writeFileSync(config, readFileSync(config, 'utf8').replace('rolloutPct: 10', 'rolloutPct: 90'));
    });
    const renamed = await until(
      async () => (await admin.get(`/api/v1/flags/${flag.id}`)).body,
      (body) => body.key === 'new-name',
    );
    expect(renamed.environments.prod).toMatchObject({ rolloutPct: 90, version: 3 });
    // Unchanged by the rename, a config keeps its version.
    expect(renamed.environments.dev.version).toBe(devBefore);
    const stale = await agent.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 5, expectedVersion: read.version });
    expect([stale.status, stale.body.error?.code]).toEqual([409, 'version_conflict']);
    expect((await prod(flag)).rolloutPct).toBe(90);
  });

  it('a pushed flag without versions, deleted and added again by a revert, is above version 0: a write read before is 409', async () => {
    const files = ['flags', 'environments/dev', 'environments/staging', 'environments/prod'].map((dir) => `projects/shop/${dir}/vz.yaml`);
    const flagYaml = 'key: vz\nname: Vz\nkind: boolean\ndefaultValue: false\n';
    const configYaml = 'enabled: false\nrolloutPct: 0\nvalueOn: true\nvalueOff: false\nrules: []\n';
    const added = pushEdit(svc.gitdir(), (checkout) => {
      for (const [i, file] of files.entries()) writeFileSync(path.join(checkout, file), i === 0 ? flagYaml : configYaml);
    });
    const listed = await until(
      async () => (await admin.get(`/api/v1/projects/${project.id}/flags`)).body.flags.find((f: Json) => f.key === 'vz'),
      (flag) => flag !== undefined,
    );
    const versions = async () => {
      const flag = (await admin.get(`/api/v1/flags/${listed.id}`)).body;
      return ['dev', 'staging', 'prod'].map((env) => flag.environments?.[env]?.version);
    };
    expect(await versions()).toEqual([0, 0, 0]);

    pushEdit(svc.gitdir(), (checkout) => {
      for (const file of files) rmSync(path.join(checkout, file));
    });
    await until(
      async () => (await admin.get(`/api/v1/flags/${listed.id}`)).status,
      (status) => status === 404,
    );
    // Added again as they were, by a revert of the deletion.
    pushEdit(svc.gitdir(), (checkout) => {
      for (const file of files) writeFileSync(path.join(checkout, file), git(checkout, 'show', `${added}:${file}`) + '\n');
    });
    await until(
      async () => (await admin.get(`/api/v1/flags/${listed.id}`)).status,
      (status) => status === 200,
    );
    expect(await versions()).toEqual([1, 1, 1]);
    const stale = await agent.put(`/api/v1/flags/${listed.id}/environments/dev/config`, { rolloutPct: 9, expectedVersion: 0 });
    expect([stale.status, stale.body.error?.code]).toEqual([409, 'version_conflict']);
    const fresh = await agent.put(`/api/v1/flags/${listed.id}/environments/dev/config`, { rolloutPct: 9, expectedVersion: 1 });
    expect(fresh.status).toBe(200);
    expect(fresh.body.environments.dev).toMatchObject({ rolloutPct: 9, version: 2 });
  });

  it('a segment deleted and made again through the API is above every version it had', async () => {
    expect((await admin.put(`/api/v1/projects/${project.id}/segments/gone`, { userIds: ['u-1'] })).status).toBe(201);
    expect((await admin.put(`/api/v1/projects/${project.id}/segments/gone`, { userIds: ['u-2'] })).status).toBe(200);
    expect((await admin.get(`/api/v1/projects/${project.id}/segments/gone`)).body.version).toBe(2);
    expect((await admin.delete(`/api/v1/projects/${project.id}/segments/gone`)).status).toBe(200);
    const made = await admin.put(`/api/v1/projects/${project.id}/segments/gone`, { userIds: ['u-3'] });
    expect(made.status).toBe(201);
    expect((await admin.get(`/api/v1/projects/${project.id}/segments/gone`)).body.version).toBe(3);
    const stale = await admin.put(`/api/v1/projects/${project.id}/segments/gone`, { userIds: ['u-4'], expectedVersion: 1 });
    expect(stale.status).toBe(409);
  });

  /** An edit of a file on main through the operator's escape hatch (a push straight into the repository on disk). */
  const onDisk = (file: string, edit: (text: string) => string) =>
    pushEdit(svc.gitdir(), (checkout) => writeFileSync(path.join(checkout, file), edit(readFileSync(path.join(checkout, file), 'utf8'))));

  it('a config changed while its project was held back is a new version once served: a write read while held back is 409', async () => {
    const held = await createProject(admin, 'held');
    const flag = await createFlag(admin, held.id, { key: 'paused' });
    expect((await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 10 })).status).toBe(200);
    const prodOf = async () => (await admin.get(`/api/v1/flags/${flag.id}`)).body;
    onDisk('projects/held/project.yaml', (text) => `${text.trimEnd()}\nrequireApproval: 5\n`);
    await until(prodOf, (body) => body.invalidFiles !== undefined);
    onDisk('projects/held/environments/prod/paused.yaml', (text) => text.replace('rolloutPct: 10', 'rolloutPct: 20'));
    // Held back: the last valid state is served, and read.
    const read = (await prodOf()).environments.prod;
    expect(read.rolloutPct).toBe(10);

    onDisk('projects/held/project.yaml', (text) => text.replace('requireApproval: 5\n', ''));
    const served = (await until(prodOf, (body) => body.invalidFiles === undefined)).environments.prod;
    expect(served.rolloutPct).toBe(20);
    expect(served.version).toBeGreaterThan(read.version);
    const stale = await agent.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 30, expectedVersion: read.version });
    expect([stale.status, stale.body.error?.code]).toEqual([409, 'version_conflict']);
    expect((await prodOf()).environments.prod.rolloutPct).toBe(20);
  });

  it('a config changed while its flag was held back by another of its files is a new version once served', async () => {
    const flag = await createFlag(admin, project.id, { key: 'paused-flag' });
    expect((await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 10 })).status).toBe(200);
    const prodOf = async () => (await admin.get(`/api/v1/flags/${flag.id}`)).body;
    const before = (await prodOf()).environments;
    onDisk('projects/shop/environments/dev/paused-flag.yaml', (text) => text.replace(/rolloutPct: \d+/, 'rolloutPct: 300'));
    await until(prodOf, (body) => body.invalidFiles !== undefined);
    onDisk(prodFile('paused-flag'), (text) => text.replace('rolloutPct: 10', 'rolloutPct: 20'));
    const read = (await prodOf()).environments.prod;
    expect(read).toMatchObject({ rolloutPct: 10, version: before.prod.version });

    onDisk('projects/shop/environments/dev/paused-flag.yaml', (text) => text.replace('rolloutPct: 300', 'rolloutPct: 0'));
    const after = (await until(prodOf, (body) => body.invalidFiles === undefined)).environments;
    expect(after.prod.rolloutPct).toBe(20);
    expect(after.prod.version).toBeGreaterThan(read.version);
    // A config whose content never changed keeps its version.
    expect(after.staging.version).toBe(before.staging.version);
    const stale = await agent.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 30, expectedVersion: read.version });
    expect([stale.status, stale.body.error?.code]).toEqual([409, 'version_conflict']);
    expect((await prodOf()).environments.prod.rolloutPct).toBe(20);
  });

  it('reports the same versions after a restart, and after its caches are deleted', async () => {
    const before = (await admin.get(`/api/v1/projects/${project.id}/flags`)).body.flags.map((f: Json) => [
      f.key,
      f.environments.prod.version,
    ]);
    const segment = (await admin.get(`/api/v1/projects/${project.id}/segments/beta`)).body.version;
    await svc.restart();
    admin = httpClient(svc.controlUrl, svc.admin);
    const read = async () =>
      (await admin.get(`/api/v1/projects/${project.id}/flags`)).body.flags.map((f: Json) => [f.key, f.environments.prod.version]);
    expect(await read()).toEqual(before);
    await svc.service.stop();
    rmSync(path.join(svc.gitdir(), 'flagops-cache'), { recursive: true, force: true });
    await svc.restart();
    admin = httpClient(svc.controlUrl, svc.admin);
    expect(await read()).toEqual(before);
    expect((await admin.get(`/api/v1/projects/${project.id}/segments/beta`)).body.version).toBe(segment);
  });
});
