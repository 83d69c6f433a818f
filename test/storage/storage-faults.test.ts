import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StartupError } from '../../src/foundations/process/startup-error.js';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { gitAsync } from '../git-http/git-async.js';
import { until } from '../helpers/deadlines.js';
import { setWritable } from '../helpers/disk-faults.js';
import { git, pushEdit } from '../helpers/git-cli.js';
import { httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

/** The service with project shop, flag checkout on in prod, and an SDK key for prod. */
async function world() {
  const svc = await startTestService();
  const admin = httpClient(svc.controlUrl, svc.admin);
  const project = await createProject(admin, 'shop');
  const flag = await createFlag(admin, project.id, { key: 'checkout' });
  expect((await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
  const sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
  return { svc, admin, flag, sdkKey };
}

async function health(svc: TestService, credential?: string): Promise<Json> {
  const res = await fetch(`${svc.controlUrl}/healthz`, credential ? { headers: { authorization: `Bearer ${credential}` } } : {});
  return res.json();
}

const evaluate = (svc: TestService, sdkKey: string) =>
  httpClient(svc.evalUrl, sdkKey).post('/v1/evaluate', { key: 'checkout', context: { userId: 'u-1' } });

async function metrics(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

/**
 * Overwrites object `oid`'s compressed bytes, wherever it is: its loose file, or its entry in the pack whose
 * index lists it (commits write their objects as small packs). Returns the file and its original bytes.
 */
function corrupt(gitdir: string, oid: string): { file: string; original: Buffer } {
  const loose = path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
  const packDir = path.join(gitdir, 'objects', 'pack');
  let file = loose;
  let at = 0;
  if (!existsSync(loose)) {
    // `git show-index` lists an index's entries as `<offset> <oid> (<crc>)`.
    const entries = (name: string) =>
      execFileSync('git', ['show-index'], { input: readFileSync(path.join(packDir, name)), encoding: 'utf8' });
    const idx = readdirSync(packDir).find((name) => name.endsWith('.idx') && entries(name).includes(oid));
    if (!idx) throw new Error(`object ${oid} is neither loose nor in a pack`);
    const line = entries(idx)
      .split('\n')
      .find((l) => l.includes(oid))!;
    file = path.join(packDir, idx.replace(/\.idx$/, '.pack'));
    const pack = readFileSync(file);
    at = Number(line.split(' ')[0]);
    while (pack[at] & 0x80) at++; // the entry's type and size
    at++;
  }
  const original = readFileSync(file);
  const damaged = Buffer.from(original);
  Buffer.from('this is not a zlib stream').copy(damaged, at);
  chmodSync(file, 0o644);
  writeFileSync(file, damaged);
  return { file, original };
}

/** Waits until /healthz says ok again: the storage check looks every few seconds, so it may take one or two. */
function healthyAgain(svc: TestService) {
  return until(
    () => health(svc),
    (body) => body.status === 'ok',
    20_000,
  );
}

describe('a corrupt object on main', () => {
  let w: Awaited<ReturnType<typeof world>>;
  let treeFile: string;
  let original: Buffer;

  beforeAll(async () => {
    w = await world();
    const gitdir = w.svc.gitdir();
    const tree = git(gitdir, 'rev-parse', 'main:projects/shop/environments/prod');
    ({ file: treeFile, original } = corrupt(gitdir, tree));
    // A start reads main afresh: nothing it served before is in memory.
    await w.svc.restart();
    w.admin = httpClient(w.svc.controlUrl, w.svc.admin);
  }, 60_000);
  afterAll(() => w?.svc.stop());

  it('is a degraded /healthz naming the organisation and the fault', async () => {
    expect(await health(w.svc)).toEqual({ status: 'degraded' });
    const details = await health(w.svc, w.svc.admin);
    expect(details.organisations).toEqual([
      expect.objectContaining({
        org: 'acme',
        fault: { kind: 'read', message: expect.stringMatching(/^git object [0-9a-f]{12} cannot be read/), since: expect.any(String) },
      }),
    ]);
  });

  it('answers evaluation 503 unavailable with the fault in words, never a 404 for the project', async () => {
    const res = await evaluate(w.svc, w.sdkKey);
    expect(res.status).toBe(503);
    expect(res.body.error).toEqual({
      code: 'unavailable',
      message: expect.stringContaining('the flags repository cannot be read: git object'),
    });
    const snapshot = await httpClient(w.svc.evalUrl, w.sdkKey).get('/v1/snapshot');
    expect(snapshot.status).toBe(503);
  });

  it('answers the control plane 503 unavailable, reads and writes alike, never 500 or 404', async () => {
    for (const res of [
      await w.admin.get('/api/v1/projects'),
      await w.admin.get(`/api/v1/flags/${w.flag.id}`),
      await w.admin.put(`/api/v1/flags/${w.flag.id}/environments/prod/config`, { rolloutPct: 40 }),
    ]) {
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('unavailable');
      expect(res.body.error.message).toContain('cannot be read');
      expect(res.body.error.message).not.toContain(w.svc.dataDir);
    }
  });

  it('is counted in flagops_storage_faults', async () => {
    expect(await metrics(w.svc.evalUrl)).toMatch(/^flagops_storage_faults\{org="acme",kind="read"\} 1$/m);
  });

  it('is served again once the object is repaired, without a restart', async () => {
    writeFileSync(treeFile, original);
    await healthyAgain(w.svc);
    const res = await evaluate(w.svc, w.sdkKey);
    expect(res.status).toBe(200);
    expect(res.body.checkout).toMatchObject({ value: true });
    expect(await metrics(w.svc.evalUrl)).not.toMatch(/^flagops_storage_faults\{/m);
  });
});

describe('a repository that cannot be written', () => {
  let w: Awaited<ReturnType<typeof world>>;
  let objects: string;
  const main = () => git(w.svc.gitdir(), 'rev-parse', 'refs/heads/main');

  beforeAll(async () => {
    w = await world();
    objects = path.join(w.svc.gitdir(), 'objects');
    setWritable(objects, false);
  }, 60_000);
  afterAll(async () => {
    if (objects) setWritable(objects, true);
    await w?.svc.stop();
  });

  it('refuses config updates and kills with 503 unavailable saying so, and changes nothing', async () => {
    const head = main();
    const update = await w.admin.put(`/api/v1/flags/${w.flag.id}/environments/prod/config`, { rolloutPct: 40 });
    expect(update.status).toBe(503);
    expect(update.body.error).toEqual({ code: 'unavailable', message: expect.stringContaining('the flags repository cannot be written') });
    const kill = await w.admin.post(`/api/v1/flags/${w.flag.id}/environments/prod/kill`, { reason: 'on fire' });
    expect(kill.status).toBe(503);
    expect(kill.body.error.code).toBe('unavailable');
    expect(main()).toBe(head);
    // Nothing was acknowledged, so nothing is served as changed.
    expect((await evaluate(w.svc, w.sdkKey)).body.checkout).toMatchObject({ value: true, reason: 'default' });
  });

  it('is a degraded /healthz and a metric, found by the service itself too', async () => {
    const details = await until(
      () => health(w.svc, w.svc.admin),
      (body) => body.organisations[0].fault !== undefined,
    );
    expect(details.status).toBe('degraded');
    expect(details.organisations[0].fault).toMatchObject({
      kind: 'write',
      message: expect.stringMatching(/operation not permitted|permission denied|read-only/),
    });
    expect(await metrics(w.svc.evalUrl)).toMatch(/^flagops_storage_faults\{org="acme",kind="write"\} 1$/m);
  });

  it('writes again, and is healthy again, once the repository can be written', async () => {
    setWritable(objects, true);
    await healthyAgain(w.svc);
    const update = await w.admin.put(`/api/v1/flags/${w.flag.id}/environments/prod/config`, { rolloutPct: 40 });
    expect(update.status).toBe(200);
  });
});

describe('a damaged ref of main', () => {
  let w: Awaited<ReturnType<typeof world>>;
  let refFile: string;
  let good: string;

  beforeAll(async () => {
    w = await world();
    refFile = path.join(w.svc.gitdir(), 'refs', 'heads', 'main');
    good = readFileSync(refFile, 'utf8');
    writeFileSync(refFile, 'garbage-not-a-sha\n');
  }, 60_000);
  afterAll(() => w?.svc.stop());

  it('is a degraded /healthz naming the ref and what is wrong with it', async () => {
    const details = await until(
      () => health(w.svc, w.svc.admin),
      (body) => body.organisations[0].fault !== undefined,
    );
    expect(details.status).toBe('degraded');
    expect(details.organisations[0].fault).toMatchObject({
      kind: 'read',
      message: 'ref refs/heads/main holds "garbage-not-a-sha", not an object id',
    });
  });

  it('keeps evaluation on the last good state it holds', async () => {
    const res = await evaluate(w.svc, w.sdkKey);
    expect(res.status).toBe(200);
    expect(res.body.checkout).toMatchObject({ value: true });
  });

  it('answers the control plane 503 unavailable naming the ref, reads and writes alike, and commits nothing', async () => {
    for (const res of [
      await w.admin.get('/api/v1/projects'),
      await w.admin.get(`/api/v1/flags/${w.flag.id}`),
      await w.admin.get('/api/v1/audit?limit=5'),
      await w.admin.get('/api/v1/invalid-files'),
      await w.admin.put(`/api/v1/flags/${w.flag.id}/environments/prod/config`, { rolloutPct: 40 }),
      await w.admin.post(`/api/v1/flags/${w.flag.id}/environments/prod/kill`, { reason: 'on fire' }),
    ]) {
      expect(res.status).toBe(503);
      expect(res.body.error).toEqual({
        code: 'unavailable',
        message: expect.stringContaining('ref refs/heads/main holds "garbage-not-a-sha", not an object id'),
      });
      expect(res.body.error.message).not.toContain(w.svc.dataDir);
    }
    expect(readFileSync(refFile, 'utf8')).toBe('garbage-not-a-sha\n');
  });

  it('is healthy and writes again once the ref is repaired, without a restart', async () => {
    writeFileSync(refFile, good);
    await healthyAgain(w.svc);
    const update = await w.admin.put(`/api/v1/flags/${w.flag.id}/environments/prod/config`, { rolloutPct: 40 });
    expect(update.status).toBe(200);
  });

  it('stops a start with one line naming the file and what to do, and starts once it is repaired', async () => {
    const repaired = readFileSync(refFile, 'utf8');
    writeFileSync(refFile, 'garbage-not-a-sha\n');
    const refused = await w.svc.restart().then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(StartupError);
    const message = (refused as StartupError).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toContain(`${refFile} holds "garbage-not-a-sha", not an object id`);
    expect(message).toMatch(/write the id of the commit refs\/heads\/main should point at into it/);
    writeFileSync(refFile, repaired);
    await w.svc.restart();
    expect((await evaluate(w.svc, w.sdkKey)).status).toBe(200);
  });
});

/** Moves the pack holding object `oid` (its .idx and .pack) out of the repository; returns what puts it back. */
function movePackAway(gitdir: string, oid: string, to: string): () => void {
  const pack = packHolding(gitdir, oid);
  const packDir = path.dirname(pack);
  mkdirSync(to, { recursive: true });
  const files = [path.basename(pack).replace(/\.pack$/, '.idx'), path.basename(pack)];
  for (const file of files) renameSync(path.join(packDir, file), path.join(to, file));
  return () => {
    for (const file of files) renameSync(path.join(to, file), path.join(packDir, file));
  };
}

describe('a commit missing from the middle of main’s history', () => {
  let w: Awaited<ReturnType<typeof world>>;
  let missing: string;
  let head: string;
  let restore: () => void;
  const main = () => git(w.svc.gitdir(), 'rev-parse', 'refs/heads/main').trim();

  beforeAll(async () => {
    w = await world();
    // Three changes of dev: the middle one's objects are in no tree of main's head, whose prod serves as before.
    const dev = (rolloutPct: number) => w.admin.put(`/api/v1/flags/${w.flag.id}/environments/dev/config`, { rolloutPct });
    expect((await dev(10)).status).toBe(200);
    expect((await dev(20)).status).toBe(200);
    missing = main();
    expect((await dev(30)).status).toBe(200);
    head = main();
    await w.svc.service.stop();
    restore = movePackAway(w.svc.gitdir(), missing, path.join(w.svc.dataDir, 'moved'));
    await w.svc.restart();
    w.admin = httpClient(w.svc.controlUrl, w.svc.admin);
  }, 60_000);
  afterAll(() => w?.svc.stop());

  it('is a degraded /healthz naming the missing commit', async () => {
    expect(await health(w.svc)).toEqual({ status: 'degraded' });
    const details = await health(w.svc, w.svc.admin);
    expect(details.organisations[0].fault).toEqual({
      kind: 'read',
      message: `git object ${missing.slice(0, 12)} is missing`,
      since: expect.any(String),
    });
  });

  it('answers evaluation and the snapshot 503 unavailable naming it, never a 404 for the project', async () => {
    for (const res of [await evaluate(w.svc, w.sdkKey), await httpClient(w.svc.evalUrl, w.sdkKey).get('/v1/snapshot')]) {
      expect(res.status).toBe(503);
      expect(res.body.error).toEqual({
        code: 'unavailable',
        message: expect.stringContaining(`git object ${missing.slice(0, 12)} is missing`),
      });
    }
  });

  it('refuses config updates and kills with 503 unavailable, committing nothing', async () => {
    const update = await w.admin.put(`/api/v1/flags/${w.flag.id}/environments/prod/config`, { rolloutPct: 40 });
    const kill = await w.admin.post(`/api/v1/flags/${w.flag.id}/environments/prod/kill`, { reason: 'on fire' });
    for (const res of [update, kill]) {
      expect(res.status).toBe(503);
      expect(res.body.error).toEqual({
        code: 'unavailable',
        message: expect.stringContaining(`git object ${missing.slice(0, 12)} is missing`),
      });
    }
    expect(main()).toBe(head);
  });

  it('is served again once the commit is back, without a restart, and what it then acknowledges is served', async () => {
    restore();
    await healthyAgain(w.svc);
    expect((await evaluate(w.svc, w.sdkKey)).body.checkout).toMatchObject({ value: true, reason: 'default' });
    expect((await w.admin.post(`/api/v1/flags/${w.flag.id}/environments/prod/kill`, { reason: 'on fire' })).status).toBe(200);
    expect((await evaluate(w.svc, w.sdkKey)).body.checkout).toMatchObject({ value: false, reason: 'killed' });
  });
});

describe('a loose object that serving main’s next head reads, damaged while the service runs', () => {
  let w: Awaited<ReturnType<typeof world>>;
  let blobFile: string;
  let original: Buffer;
  let clone: string;
  const file = 'projects/shop/environments/prod/checkout.yaml';
  const main = () => git(w.svc.gitdir(), 'rev-parse', 'refs/heads/main').trim();
  const kill = () => w.admin.post(`/api/v1/flags/${w.flag.id}/environments/prod/kill`, { reason: 'on fire' });

  beforeAll(async () => {
    w = await world();
    const gitdir = w.svc.gitdir();
    // A push arrives as loose objects; checkout is turned off in prod by it.
    pushEdit(gitdir, (checkout) => {
      const config = path.join(checkout, file);
      writeFileSync(config, readFileSync(config, 'utf8').replace('rolloutPct: 100', 'rolloutPct: 0'));
    });
    await until(
      () => evaluate(w.svc, w.sdkKey),
      (res) => res.body.checkout?.value === false,
    );
    // A start reads main afresh: the pushed file is no longer parsed in memory, only its blob holds it.
    await w.svc.restart();
    w.admin = httpClient(w.svc.controlUrl, w.svc.admin);
    // An engineer's clone, made before the damage, that pushes over /git.
    clone = path.join(w.svc.dataDir, 'clone');
    git(w.svc.dataDir, 'clone', '--quiet', gitdir, clone);
    git(clone, 'remote', 'set-url', 'origin', `${w.svc.controlUrl.replace('://', `://engineer:${w.svc.admin}@`)}/git/acme.git`);
    const blob = git(gitdir, 'rev-parse', `main:${file}`);
    blobFile = path.join(gitdir, 'objects', blob.slice(0, 2), blob.slice(2));
    original = readFileSync(blobFile);
    chmodSync(blobFile, 0o644);
    writeFileSync(blobFile, Buffer.alloc(original.length));
  }, 60_000);
  afterAll(() => w?.svc.stop());

  it('answers the write whose new head evaluation cannot serve 503 unavailable naming the object, never 200', async () => {
    const update = await w.admin.put(`/api/v1/flags/${w.flag.id}/environments/prod/config`, { rolloutPct: 100 });
    expect([update.status, update.body.error]).toEqual([
      503,
      {
        code: 'unavailable',
        message: expect.stringMatching(/the flags repository cannot be read: git object [0-9a-f]{12} cannot be read/),
      },
    ]);
    expect((await evaluate(w.svc, w.sdkKey)).body.checkout).toMatchObject({ value: false });
    expect((await health(w.svc, w.svc.admin)).organisations[0].fault).toMatchObject({ kind: 'read' });
  });

  it('refuses later config updates and kills with 503 unavailable, committing nothing, while the fault lasts', async () => {
    const head = main();
    for (const res of [await w.admin.put(`/api/v1/flags/${w.flag.id}/environments/prod/config`, { rolloutPct: 50 }), await kill()]) {
      expect([res.status, res.body.error?.code]).toEqual([503, 'unavailable']);
      expect(res.body.error.message).toContain('cannot be read');
    }
    expect(main()).toBe(head);
    expect((await evaluate(w.svc, w.sdkKey)).body.checkout).toMatchObject({ value: false, reason: 'default' });
  });

  it('refuses a push over /git too, before git takes anything', async () => {
    const head = main();
    // Up to main first (the update answered 503 is on it): fetching that reads none of the damaged object.
    expect((await gitAsync(clone, 'pull', '--quiet', '--ff-only', 'origin', 'main')).ok).toBe(true);
    writeFileSync(path.join(clone, 'README.md'), 'pushed while main cannot be served\n');
    git(clone, 'add', '-A');
    git(clone, 'commit', '--quiet', '-m', 'a push while main cannot be served');
    const pushed = await gitAsync(clone, 'push', 'origin', 'HEAD:main');
    expect([pushed.ok, pushed.stderr]).toEqual([false, expect.stringContaining('503')]);
    expect(main()).toBe(head);
  });

  it('serves main again once the object is restored, without a restart, and what it then acknowledges is served', async () => {
    writeFileSync(blobFile, original);
    await healthyAgain(w.svc);
    // The update answered 503 was on main already: it is served now.
    expect((await evaluate(w.svc, w.sdkKey)).body.checkout).toMatchObject({ value: true });
    expect((await kill()).status).toBe(200);
    expect((await evaluate(w.svc, w.sdkKey)).body.checkout).toMatchObject({ value: false, reason: 'killed' });
  });
});

describe('main’s head removed from the files on disk while the service runs', () => {
  let w: Awaited<ReturnType<typeof world>>;
  afterAll(() => w?.svc.stop());

  it('is found by the service itself: degraded, and writes refused (not acknowledged on a history a restart could not serve)', async () => {
    w = await world();
    const gitdir = w.svc.gitdir();
    const head = git(gitdir, 'rev-parse', 'refs/heads/main').trim();
    // The head commit's pack moved away: memory still holds it, the disk does not.
    const restore = movePackAway(gitdir, head, path.join(w.svc.dataDir, 'moved-head'));
    const degraded = await until(
      () => health(w.svc, w.svc.admin),
      (body) => body.status === 'degraded',
      20_000,
    );
    expect(degraded.organisations[0].fault).toMatchObject({
      kind: 'read',
      message: `git object ${head.slice(0, 12)} (main's head) is missing`,
    });
    const update = await w.admin.put(`/api/v1/flags/${w.flag.id}/environments/prod/config`, { rolloutPct: 40 });
    expect([update.status, update.body.error?.code]).toEqual([503, 'unavailable']);
    expect(update.body.error.message).toContain("(main's head) is missing");
    expect(git(gitdir, 'rev-parse', 'refs/heads/main').trim()).toBe(head);
    // Evaluation keeps serving the last state it holds.
    expect((await evaluate(w.svc, w.sdkKey)).body.checkout).toMatchObject({ value: true });

    restore();
    await healthyAgain(w.svc);
    expect((await w.admin.put(`/api/v1/flags/${w.flag.id}/environments/prod/config`, { rolloutPct: 40 })).status).toBe(200);
  }, 60_000);
});

/** The pack file (`objects/pack/pack-….pack`) whose index lists object `oid`. */
function packHolding(gitdir: string, oid: string): string {
  const packDir = path.join(gitdir, 'objects', 'pack');
  const idx = readdirSync(packDir).find(
    (name) =>
      name.endsWith('.idx') &&
      execFileSync('git', ['show-index'], { input: readFileSync(path.join(packDir, name)), encoding: 'utf8' }).includes(oid),
  );
  if (!idx) throw new Error(`object ${oid} is in no pack`);
  return path.join(packDir, idx.replace(/\.idx$/, '.pack'));
}

describe('a pack file damaged, truncated or removed while the service runs (main’s head intact in memory)', () => {
  let w: Awaited<ReturnType<typeof world>>;
  let gitdir: string;
  const main = () => git(gitdir, 'rev-parse', 'refs/heads/main').trim();
  const dev = (rolloutPct: number) => w.admin.put(`/api/v1/flags/${w.flag.id}/environments/dev/config`, { rolloutPct });
  const degraded = () =>
    until(
      () => health(w.svc, w.svc.admin),
      (body) => body.status === 'degraded',
      20_000,
    );

  /** A write answers 503 naming `fault`, a kill too, and main stays where it was. */
  async function writesRefused(fault: string) {
    const head = main();
    const update = await dev(33);
    const kill = await w.admin.post(`/api/v1/flags/${w.flag.id}/environments/prod/kill`, { reason: 'on fire' });
    for (const res of [update, kill]) {
      expect([res.status, res.body.error?.code]).toEqual([503, 'unavailable']);
      expect(res.body.error.message).toContain(fault);
    }
    expect(main()).toBe(head);
  }

  beforeAll(async () => {
    w = await world();
    gitdir = w.svc.gitdir();
    for (const pct of [10, 20, 30]) expect((await dev(pct)).status).toBe(200);
  }, 60_000);
  afterAll(() => w?.svc.stop());

  it('zeroed in place (same size, same trailer): found by the service itself, writes refused until it is repaired', async () => {
    const pack = packHolding(gitdir, main());
    const original = readFileSync(pack);
    chmodSync(pack, 0o644);
    const fd = openSync(pack, 'r+');
    writeSync(fd, Buffer.alloc(original.length - 40), 0, original.length - 40, 20);
    closeSync(fd);
    const fault = `pack file objects/pack/${path.basename(pack)} is damaged (its checksum does not match its bytes)`;
    expect((await degraded()).organisations[0].fault).toMatchObject({ kind: 'read', message: fault });
    await writesRefused(fault);
    expect(await metrics(w.svc.evalUrl)).toContain('flagops_storage_faults{org="acme",kind="read"} 1');

    writeFileSync(pack, original);
    await healthyAgain(w.svc);
    expect((await dev(40)).status).toBe(200);
  }, 60_000);

  it('truncated to nothing: found, writes refused until it is back', async () => {
    const pack = packHolding(gitdir, main());
    const original = readFileSync(pack);
    chmodSync(pack, 0o644);
    truncateSync(pack, 0);
    const fault = `pack file objects/pack/${path.basename(pack)} is damaged (it is empty)`;
    expect((await degraded()).organisations[0].fault).toMatchObject({ kind: 'read', message: fault });
    await writesRefused(fault);

    writeFileSync(pack, original);
    await healthyAgain(w.svc);
    expect((await dev(50)).status).toBe(200);
  }, 60_000);

  it('holding main’s parent, removed (the head’s pack intact): found, writes refused until it is back', async () => {
    const parent = git(gitdir, 'rev-parse', 'refs/heads/main^').trim();
    const pack = path.basename(packHolding(gitdir, parent));
    const restore = movePackAway(gitdir, parent, path.join(w.svc.dataDir, 'moved-parent'));
    const fault = `is missing (pack file objects/pack/${pack} was removed)`;
    expect((await degraded()).organisations[0].fault.message).toMatch(/^git object [0-9a-f]{12} is missing \(/);
    expect((await health(w.svc, w.svc.admin)).organisations[0].fault.message).toContain(fault);
    await writesRefused(fault);

    restore();
    await healthyAgain(w.svc);
    expect((await dev(60)).status).toBe(200);
    expect(git(gitdir, 'fsck', '--no-dangling')).toBe('');
  }, 60_000);

  it('holding only objects nothing references, removed (as a repack leaves them out), is no fault', async () => {
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], {
      cwd: gitdir,
      input: 'referenced by no commit\n',
      encoding: 'utf8',
    }).trim();
    const base = path.join(gitdir, 'objects', 'pack', 'pack');
    const name = execFileSync('git', ['pack-objects', '-q', base], { cwd: gitdir, input: `${blob}\n`, encoding: 'utf8' }).trim();
    rmSync(path.join(gitdir, 'objects', blob.slice(0, 2), blob.slice(2)));
    // A look of the storage check takes the new pack in; then it goes, and its one object with it.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    for (const ext of ['idx', 'pack']) rmSync(`${base}-${name}.${ext}`, { force: true });
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    expect((await health(w.svc, w.svc.admin)).status).toBe('ok');
    expect((await dev(65)).status).toBe(200);
  }, 60_000);

  it('a repack beside the service, which removes packs whose objects it put in a new one, is no fault', async () => {
    git(gitdir, 'repack', '-A', '-d', '-q');
    // Two looks of the storage check.
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    expect((await health(w.svc, w.svc.admin)).status).toBe('ok');
    expect((await dev(70)).status).toBe(200);
  }, 60_000);
});

describe('the repository folder moved away while the service runs', () => {
  let w: Awaited<ReturnType<typeof world>>;
  let gitdir: string;
  let moved: string;

  beforeAll(async () => {
    w = await world();
    gitdir = w.svc.gitdir();
    moved = path.join(w.svc.dataDir, 'moved.git');
    renameSync(gitdir, moved);
    // The service's own look at the files (every few seconds) has found it.
    await until(
      () => health(w.svc, w.svc.admin),
      (body) => body.organisations[0].fault !== undefined,
      20_000,
    );
  }, 60_000);
  afterAll(async () => {
    if (gitdir && !existsSync(gitdir) && existsSync(moved)) renameSync(moved, gitdir);
    await w?.svc.stop();
  });

  it('is a degraded /healthz saying the folder is gone', async () => {
    const details = await health(w.svc, w.svc.admin);
    expect(details.status).toBe('degraded');
    expect(details.organisations[0].fault).toMatchObject({ kind: 'read', message: 'the repository folder is gone' });
  });

  it('answers control-plane reads and writes 503 unavailable, never an empty list or 404, and writes nothing', async () => {
    for (const res of [
      await w.admin.get('/api/v1/projects'),
      await w.admin.get(`/api/v1/flags/${w.flag.id}`),
      await w.admin.put(`/api/v1/flags/${w.flag.id}/environments/prod/config`, { rolloutPct: 40 }),
      await w.admin.post(`/api/v1/flags/${w.flag.id}/environments/prod/kill`, { reason: 'on fire' }),
      await w.admin.post('/api/v1/projects', { name: 'Other', slug: 'other' }),
    ]) {
      expect([res.status, res.body.error]).toEqual([
        503,
        { code: 'unavailable', message: expect.stringContaining('the flags repository cannot be read: the repository folder is gone') },
      ]);
    }
    // No new repository was made in its place.
    expect(existsSync(gitdir)).toBe(false);
  });

  it('keeps evaluation and the snapshot on what it served before', async () => {
    expect((await evaluate(w.svc, w.sdkKey)).body.checkout).toMatchObject({ value: true });
    expect((await httpClient(w.svc.evalUrl, w.sdkKey).get('/v1/snapshot')).status).toBe(200);
  });

  it('is healthy and writes again once the folder is back, without a restart', async () => {
    renameSync(moved, gitdir);
    await healthyAgain(w.svc);
    expect((await w.admin.get('/api/v1/projects')).body.projects).toEqual([expect.objectContaining({ slug: 'shop' })]);
    expect((await w.admin.put(`/api/v1/flags/${w.flag.id}/environments/prod/config`, { rolloutPct: 40 })).status).toBe(200);
  });
});

describe('main’s ref file deleted while the service runs (its objects still there)', () => {
  let w: Awaited<ReturnType<typeof world>>;
  afterAll(() => w?.svc.stop());

  it('answers the control plane 503 and keeps evaluation serving, then recovers once the ref is back', async () => {
    w = await world();
    const refFile = path.join(w.svc.gitdir(), 'refs', 'heads', 'main');
    const head = readFileSync(refFile, 'utf8');
    rmSync(refFile);
    await until(
      () => health(w.svc, w.svc.admin),
      (body) => body.organisations[0].fault !== undefined,
      20_000,
    );
    for (const res of [await w.admin.get('/api/v1/projects'), await w.admin.post('/api/v1/projects', { name: 'Other', slug: 'other' })]) {
      expect([res.status, res.body.error?.message]).toEqual([503, expect.stringContaining('main is gone from the repository')]);
    }
    expect(existsSync(refFile)).toBe(false);
    expect((await evaluate(w.svc, w.sdkKey)).body.checkout).toMatchObject({ value: true });

    writeFileSync(refFile, head);
    await healthyAgain(w.svc);
    expect((await w.admin.get('/api/v1/projects')).body.projects).toHaveLength(1);
  }, 60_000);
});

describe('a repository missing at start, of an organisation that had one', () => {
  let w: Awaited<ReturnType<typeof world>>;
  let gitdir: string;
  beforeAll(async () => {
    w = await world();
    gitdir = w.svc.gitdir();
    await w.svc.service.stop();
  }, 60_000);
  afterAll(() => w?.svc.stop());

  const refusedStart = () =>
    w.svc.restart().then(
      () => null,
      (err: unknown) => err,
    );

  it('stops the start with one line naming the folder and what to do, and makes nothing in its place', async () => {
    const moved = path.join(w.svc.dataDir, 'moved.git');
    renameSync(gitdir, moved);
    const refused = await refusedStart();
    expect(refused).toBeInstanceOf(StartupError);
    const { message, exitCode } = refused as StartupError;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toContain(`${gitdir} is missing`);
    expect(message).toContain('restore it from a backup, or from a clone');
    expect(exitCode).toBe(1);
    expect(existsSync(gitdir)).toBe(false);
    renameSync(moved, gitdir);
    await w.svc.restart();
    expect((await evaluate(w.svc, w.sdkKey)).body.checkout).toMatchObject({ value: true });
    await w.svc.service.stop();
  });

  it('stops the start naming refs/heads/main when it is gone and the objects are still there', async () => {
    const refFile = path.join(gitdir, 'refs', 'heads', 'main');
    const head = readFileSync(refFile, 'utf8');
    expect(existsSync(path.join(gitdir, 'packed-refs'))).toBe(false);
    rmSync(refFile);
    const refused = await refusedStart();
    expect(refused).toBeInstanceOf(StartupError);
    const { message } = refused as StartupError;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toContain(`${refFile} is missing`);
    expect(message).toMatch(/write the id of main's last commit into it/);
    expect(existsSync(refFile)).toBe(false);
    writeFileSync(refFile, head);
    await w.svc.restart();
    w.admin = httpClient(w.svc.controlUrl, w.svc.admin);
    expect((await w.admin.get('/api/v1/projects')).body.projects).toEqual([expect.objectContaining({ slug: 'shop' })]);
  });
});

describe('one organisation’s head commit missing at a start after a crash (its audit index behind main)', () => {
  let svc: TestService;
  let kills: Record<string, { admin: ReturnType<typeof httpClient>; flagId: string; sdkKey: string; head: string }>;
  let restore: () => void;
  const killed = (org: string) =>
    httpClient(svc.evalUrl, kills[org].sdkKey).post('/v1/evaluate', { key: 'checkout', context: { userId: 'u-1' } });

  beforeAll(async () => {
    svc = await startTestService({ orgs: ['o1', 'o2'] });
    kills = {};
    for (const org of ['o1', 'o2']) {
      const admin = httpClient(svc.controlUrl, svc.orgs[org].admin);
      const project = await createProject(admin, 'shop');
      const flag = await createFlag(admin, project.id, { key: 'checkout' });
      const sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
      kills[org] = { admin, flagId: flag.id, sdkKey, head: '' };
    }
    await svc.restart();
    // The audit caches as a crash leaves them: written at start, not since.
    const auditDir = path.join(svc.dataDir, 'state', 'audit');
    const cachedAtStart = Object.fromEntries(['o1', 'o2'].map((org) => [org, readFileSync(path.join(auditDir, `${org}.json`))]));
    for (const org of ['o1', 'o2']) {
      const admin = httpClient(svc.controlUrl, svc.orgs[org].admin);
      expect((await admin.post(`/api/v1/flags/${kills[org].flagId}/environments/prod/kill`, { reason: 'on fire' })).status).toBe(200);
      kills[org].head = git(svc.gitdir(org), 'rev-parse', 'refs/heads/main').trim();
    }
    await svc.service.stop();
    for (const [org, bytes] of Object.entries(cachedAtStart)) writeFileSync(path.join(auditDir, `${org}.json`), bytes);
    restore = movePackAway(svc.gitdir('o1'), kills.o1.head, path.join(svc.dataDir, 'moved-head'));
    await svc.restart();
    for (const org of ['o1', 'o2']) kills[org].admin = httpClient(svc.controlUrl, svc.orgs[org].admin);
  }, 90_000);
  afterAll(() => svc?.stop());

  it('starts, and serves the intact organisation its acknowledged kill and audit trail', async () => {
    expect((await killed('o2')).body.checkout).toMatchObject({ value: false, reason: 'killed' });
    const audit = await kills.o2.admin.get('/api/v1/audit?limit=1');
    expect(audit.status).toBe(200);
    expect(audit.body.entries[0]).toMatchObject({ id: kills.o2.head, action: 'kill' });
  });

  it('reports the damaged organisation degraded, naming the missing commit, and answers its evaluation 503', async () => {
    const details = await health(svc, svc.orgs.o1.admin);
    expect(details.status).toBe('degraded');
    expect(details.organisations).toEqual([
      expect.objectContaining({
        org: 'o1',
        fault: expect.objectContaining({ kind: 'read', message: expect.stringContaining(kills.o1.head.slice(0, 12)) }),
      }),
    ]);
    expect((await health(svc, svc.orgs.o2.admin)).organisations).toEqual([expect.not.objectContaining({ fault: expect.anything() })]);
    for (const res of [await killed('o1'), await kills.o1.admin.get('/api/v1/audit?limit=1')]) {
      expect([res.status, res.body.error]).toEqual([
        503,
        { code: 'unavailable', message: expect.stringContaining(`git object ${kills.o1.head.slice(0, 12)} is missing`) },
      ]);
    }
  });

  it('serves it again once the commit is back, without a restart, its audit trail caught up', async () => {
    restore();
    await healthyAgain(svc);
    // The storage check that found it readable built the audit index too, before any query asked for it.
    const cache = path.join(svc.dataDir, 'state', 'audit', 'o1.json');
    await until(
      async () => readFileSync(cache, 'utf8'),
      (text) => text.includes(kills.o1.head),
      10_000,
    );
    expect((await killed('o1')).body.checkout).toMatchObject({ value: false, reason: 'killed' });
    const audit = await kills.o1.admin.get('/api/v1/audit?limit=1');
    expect(audit.body.entries[0]).toMatchObject({ id: kills.o1.head, action: 'kill' });
  });
});

describe('a refs/heads/main naming an object id that is not a commit of the repository, at start', () => {
  let svc: TestService;
  let refFile: string;
  let good: string;
  const sdkKeys: Record<string, string> = {};
  const evaluateIn = (org: string) =>
    httpClient(svc.evalUrl, sdkKeys[org]).post('/v1/evaluate', { key: 'checkout', context: { userId: 'u-1' } });
  const refusedStart = () =>
    svc.restart().then(
      () => null,
      (err: unknown) => err,
    );

  beforeAll(async () => {
    svc = await startTestService({ orgs: ['o1', 'o2'] });
    for (const org of ['o1', 'o2']) {
      const admin = httpClient(svc.controlUrl, svc.orgs[org].admin);
      const project = await createProject(admin, 'shop');
      const flag = await createFlag(admin, project.id, { key: 'checkout' });
      expect((await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
      sdkKeys[org] = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    }
    refFile = path.join(svc.gitdir('o1'), 'refs', 'heads', 'main');
    good = readFileSync(refFile, 'utf8');
    await svc.service.stop();
  }, 60_000);
  afterAll(() => svc?.stop());

  it('of an object the repository lacks (as when a pack is lost): that organisation is degraded naming it, the others are served', async () => {
    const unknown = 'c0ffee'.padEnd(40, '0');
    writeFileSync(refFile, `${unknown}\n`);
    await svc.restart();
    expect((await evaluateIn('o2')).body.checkout).toMatchObject({ value: true });
    const details = await health(svc, svc.orgs.o1.admin);
    expect(details.status).toBe('degraded');
    expect(details.organisations[0].fault).toMatchObject({
      kind: 'read',
      message: expect.stringContaining(`git object ${unknown.slice(0, 12)}`),
    });
    const res = await evaluateIn('o1');
    expect([res.status, res.body.error?.code]).toEqual([503, 'unavailable']);
    writeFileSync(refFile, good);
    await healthyAgain(svc);
    expect((await evaluateIn('o1')).body.checkout).toMatchObject({ value: true });
    expect((await httpClient(svc.controlUrl, svc.orgs.o1.admin).get('/api/v1/audit?limit=1')).status).toBe(200);
    await svc.service.stop();
  }, 60_000);

  it('of a blob: the start stops with one line naming the file and what to do, and starts once it is repaired', async () => {
    const blob = git(svc.gitdir('o1'), 'rev-parse', `${good.trim()}:projects/shop/project.yaml`).trim();
    writeFileSync(refFile, `${blob}\n`);
    const refused = await refusedStart();
    expect(refused).toBeInstanceOf(StartupError);
    const { message } = refused as StartupError;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toContain(`${refFile} holds the id of a blob, not of a commit`);
    expect(message).toMatch(/write the id of the commit refs\/heads\/main should point at into it/);
    expect(message).not.toContain('/healthz');
    writeFileSync(refFile, good);
    await svc.restart();
    expect((await evaluateIn('o1')).body.checkout).toMatchObject({ value: true });
  }, 60_000);
});

describe('a pack file damaged while the service was stopped', () => {
  let w: Awaited<ReturnType<typeof world>>;
  let gitdir: string;
  const main = () => git(gitdir, 'rev-parse', 'refs/heads/main').trim();
  const dev = (rolloutPct: number) => w.admin.put(`/api/v1/flags/${w.flag.id}/environments/dev/config`, { rolloutPct });

  beforeAll(async () => {
    w = await world();
    gitdir = w.svc.gitdir();
    for (const pct of [10, 20, 30]) expect((await dev(pct)).status).toBe(200);
  }, 60_000);
  afterAll(() => w?.svc.stop());

  /** Stops the service, repacks (one pack holds everything), damages `length` bytes at `at(pack)`, starts again. */
  async function restartOnDamagedPack(at: (pack: Buffer) => number, bytes: Buffer): Promise<{ pack: string; restore: () => void }> {
    await w.svc.service.stop();
    git(gitdir, 'repack', '-a', '-d', '-q');
    const [name] = readdirSync(path.join(gitdir, 'objects', 'pack')).filter((n) => n.endsWith('.pack'));
    const pack = path.join(gitdir, 'objects', 'pack', name);
    const original = readFileSync(pack);
    const damaged = Buffer.from(original);
    bytes.copy(damaged, at(original));
    chmodSync(pack, 0o644);
    writeFileSync(pack, damaged);
    await w.svc.restart();
    w.admin = httpClient(w.svc.controlUrl, w.svc.admin);
    return { pack: name, restore: () => writeFileSync(pack, original) };
  }

  /** From the start on: degraded naming the pack, counted, writes and kills 503 with main where it was. */
  async function reportedFromTheStart(pack: string) {
    const fault = `pack file objects/pack/${pack} is damaged (its checksum does not match its bytes)`;
    const details = await health(w.svc, w.svc.admin);
    expect(details.status).toBe('degraded');
    expect(details.organisations[0].fault).toMatchObject({ kind: 'read', message: fault });
    expect(await metrics(w.svc.evalUrl)).toContain('flagops_storage_faults{org="acme",kind="read"} 1');
    const head = main();
    const update = await dev(33);
    const kill = await w.admin.post(`/api/v1/flags/${w.flag.id}/environments/prod/kill`, { reason: 'on fire' });
    for (const res of [update, kill]) {
      expect([res.status, res.body.error?.code]).toEqual([503, 'unavailable']);
      expect(res.body.error.message).toContain(fault);
    }
    expect(main()).toBe(head);
  }

  it('in its header (git can read none of it): reported from the start on, writes refused until it is repaired', async () => {
    const { pack, restore } = await restartOnDamagedPack(() => 6, Buffer.from([0xff, 0xff, 0xff, 0xff]));
    await reportedFromTheStart(pack);
    restore();
    await healthyAgain(w.svc);
    expect((await dev(40)).status).toBe(200);
  }, 60_000);

  it('in an old tree that the start does not read: reported from the start on too', async () => {
    const oldTree = git(gitdir, 'rev-parse', 'main~2^{tree}').trim();
    const { pack, restore } = await restartOnDamagedPack((bytes) => {
      const idx = path.join(gitdir, 'objects', 'pack', readdirSync(path.join(gitdir, 'objects', 'pack')).find((n) => n.endsWith('.idx'))!);
      const line = execFileSync('git', ['show-index'], { input: readFileSync(idx), encoding: 'utf8' })
        .split('\n')
        .find((l) => l.includes(oldTree))!;
      let at = Number(line.split(' ')[0]);
      while (bytes[at] & 0x80) at++; // the entry's type and size
      return at + 4;
    }, Buffer.from('damaged'));
    await reportedFromTheStart(pack);
    restore();
    await healthyAgain(w.svc);
    expect((await dev(50)).status).toBe(200);
  }, 60_000);
});
