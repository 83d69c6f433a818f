import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '../control-plane/fixtures.js';
import { setWritable } from '../helpers/disk-faults.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { gitAsync } from './git-async.js';

const WRITE_FAULT =
  /^the flags repository cannot be written: (read-only file system|operation not permitted|permission denied) \(E[A-Z]+\); /;

describe('a repository that cannot be written (read-only, a full disk), over /git', () => {
  let svc: TestService;
  let admin: HttpClient;
  let work: string;
  let gitdir: string;
  let readOnly = false;
  const remote = () => `${svc.controlUrl.replace('://', `://engineer:${svc.admin}@`)}/git/acme.git`;
  const main = () => git(gitdir, 'rev-parse', 'refs/heads/main');
  const makeWritable = (writable: boolean) => {
    setWritable(gitdir, writable);
    readOnly = !writable;
  };
  /** git's first request of a push, as git sends it. */
  const pushAdvertisement = () =>
    fetch(`${svc.controlUrl}/git/acme.git/info/refs?service=git-receive-pack`, { headers: { authorization: `Bearer ${svc.admin}` } });

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    await createProject(admin, 'shop');
    gitdir = svc.gitdir();
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-read-only-'));
  }, 60_000);
  afterAll(async () => {
    try {
      if (readOnly) setWritable(gitdir, true);
      await svc?.stop();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it('serves a clone, a read, though no /git request came before: a clone needs no push check hook', async () => {
    expect(existsSync(path.join(gitdir, 'hooks', 'pre-receive'))).toBe(false);
    makeWritable(false);
    const cloned = await gitAsync(work, 'clone', '--quiet', remote(), path.join(work, 'clone'));
    expect([cloned.ok, cloned.stderr]).toEqual([true, '']);
    expect(git(path.join(work, 'clone'), 'rev-parse', 'HEAD')).toBe(main());
  });

  it('answers a push 503 unavailable with the fault in words, never 500, and changes nothing', async () => {
    const head = main();
    const refused = await pushAdvertisement();
    expect(refused.status).toBe(503);
    expect((await refused.json()).error).toEqual({ code: 'unavailable', message: expect.stringMatching(WRITE_FAULT) });
    const clone = path.join(work, 'clone');
    writeFileSync(path.join(clone, 'README.md'), 'pushed while the repository is read-only\n');
    git(clone, 'add', '-A');
    git(clone, 'commit', '--quiet', '-m', 'a push while the repository is read-only');
    const pushed = await gitAsync(clone, 'push', 'origin', 'HEAD:main');
    expect([pushed.ok, pushed.stderr]).toEqual([false, expect.stringContaining('503')]);
    expect(main()).toBe(head);
  });

  it('takes the push once the repository can be written again', async () => {
    makeWritable(true);
    const clone = path.join(work, 'clone');
    const pushed = await gitAsync(clone, 'push', 'origin', 'HEAD:main');
    expect([pushed.ok, pushed.stderr]).toEqual([true, expect.any(String)]);
    expect(main()).toBe(git(clone, 'rev-parse', 'HEAD'));
  });

  it('answers a push 503 too once the push check hook is in place, and still serves fetches', async () => {
    expect(existsSync(path.join(gitdir, 'hooks', 'pre-receive'))).toBe(true);
    makeWritable(false);
    const head = main();
    const clone = path.join(work, 'clone');
    expect((await gitAsync(clone, 'fetch', '--quiet', 'origin')).ok).toBe(true);
    const refused = await pushAdvertisement();
    expect(refused.status).toBe(503);
    expect((await refused.json()).error).toEqual({ code: 'unavailable', message: expect.stringMatching(WRITE_FAULT) });
    writeFileSync(path.join(clone, 'README.md'), 'pushed while the repository is read-only again\n');
    git(clone, 'commit', '--quiet', '-am', 'another push while the repository is read-only');
    const pushed = await gitAsync(clone, 'push', 'origin', 'HEAD:main');
    expect([pushed.ok, pushed.stderr]).toEqual([false, expect.stringContaining('503')]);
    expect(main()).toBe(head);
  });
});
