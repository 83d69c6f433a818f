import { cpSync, existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { hasControlCharacter } from '../../src/foundations/validation/one-line.js';
import { httpClient } from '../helpers/http-client.js';
import { bundleMain, freePort, type ServiceProcess, startProcess, waitHealthy } from './service-process.js';

/** Every file and folder under `dir` with its size and modification time: what "changes nothing" compares. */
function snapshotOf(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const file = path.join(rel, name);
      const info = statSync(path.join(dir, file));
      // A folder's time is left out: the running service's storage check (every 5 s) makes and removes a probe
      // file in objects/, which a machine slow enough to start a second process in over 5 s sees.
      const what = info.isDirectory() ? 'dir' : `${info.size} ${info.mtimeMs}`;
      out.push(`${file} ${what} ${(info.mode & 0o777).toString(8)}`);
      if (info.isDirectory()) walk(file);
    }
  };
  walk('');
  return out;
}

/**
 * The snapshot of `dir` once the service that owns it has finished its start-up work (the first flag-health
 * check writes the state after the service answers healthy): the same for five reads in a row, 100 ms apart.
 */
async function settledSnapshotOf(dir: string): Promise<string[]> {
  let last = snapshotOf(dir);
  for (let same = 0; same < 5; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = snapshotOf(dir);
    same = now.join('\n') === last.join('\n') ? same + 1 : 0;
    last = now;
  }
  return last;
}

/** Files (not folders) under `dir` whose mode lets anyone but the owner read or write them. */
function readableByOthers(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel))) {
      const file = path.join(rel, name);
      const info = statSync(path.join(dir, file));
      if (info.isDirectory()) walk(file);
      else if ((info.mode & 0o077) !== 0) out.push(`${file} ${(info.mode & 0o777).toString(8)}`);
    }
  };
  walk('');
  return out;
}

const stackTrace = /\n\s+at /;

describe('starting the service (one service per data directory, ports first)', () => {
  let dir: string;
  let bundle: Awaited<ReturnType<typeof bundleMain>>;
  const running: ServiceProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-start-up-'));
    bundle = await bundleMain();
  });
  afterAll(async () => {
    for (const p of running) p.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    await bundle.remove();
  });

  async function settings(name: string, extra: Record<string, string> = {}) {
    const control = await freePort();
    const evaluation = await freePort();
    const env = {
      FLAGOPS_DATA_DIR: path.join(dir, name),
      FLAGOPS_CONTROL_PORT: String(control),
      FLAGOPS_EVAL_PORT: String(evaluation),
      ...extra,
    };
    return { env, dataDir: env.FLAGOPS_DATA_DIR, controlUrl: `http://127.0.0.1:${control}` };
  }

  function start(env: Record<string, string>): ServiceProcess {
    const p = startProcess(bundle.entry, env);
    running.push(p);
    return p;
  }

  async function startHealthy(env: Record<string, string>, controlUrl: string): Promise<ServiceProcess> {
    const p = start(env);
    await waitHealthy(`${controlUrl}/healthz`, p.child);
    return p;
  }

  it('refuses a second start on a data directory in use at once, naming the directory and the pid, and changes nothing there', async () => {
    const { env, dataDir, controlUrl } = await settings('twice');
    const first = await startHealthy(env, controlUrl);
    const before = await settledSnapshotOf(dataDir);

    // As a user would: the same command again, ports included.
    const second = start(env);
    expect(await second.exit).toBe(1);
    const message = second.stderr.join('');
    expect(message).toBe(
      `flagops: the data directory ${dataDir} is in use by another flagops service (pid ${first.child.pid}); stop that one first, or set FLAGOPS_DATA_DIR to another directory\n`,
    );
    // Other ports, same directory: refused all the same.
    const other = await settings('twice');
    const third = start(other.env);
    expect(await third.exit).toBe(1);
    expect(third.stderr.join('')).toContain(`is in use by another flagops service (pid ${first.child.pid})`);

    expect(snapshotOf(dataDir)).toEqual(before);
    expect((await fetch(`${controlUrl}/healthz`)).status).toBe(200);
    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);
  });

  it('does not start on a damaged keys file: one line naming the file, what is wrong and what to do, and nothing changed', async () => {
    const { env, dataDir, controlUrl } = await settings('damaged-keys');
    const first = await startHealthy(env, controlUrl);
    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);
    const keys = path.join(dataDir, 'state', 'keys.json');
    writeFileSync(keys, (await readFile(keys, 'utf8')).slice(0, 100));
    const before = snapshotOf(dataDir);

    const again = start(env);
    expect(await again.exit).toBe(1);
    const message = again.stderr.join('');
    expect(message).toMatch(
      new RegExp(
        `^flagops: ${keys.replace(/[.*+?^$()|[\]\\]/g, '\\$&')} is not valid JSON: .*; it holds every organisation and key: restore it from a backup`,
      ),
    );
    expect(message.trim().split('\n')).toHaveLength(1);
    expect(message).not.toMatch(stackTrace);
    expect(snapshotOf(dataDir)).toEqual(before);
  });

  it('is not blocked by a SIGKILLed service, and a clean stop (SIGTERM) removes the lock', async () => {
    const { env, dataDir, controlUrl } = await settings('crash');
    const crashed = await startHealthy(env, controlUrl);
    expect(existsSync(path.join(dataDir, 'flagops.lock'))).toBe(true);
    crashed.child.kill('SIGKILL');
    await crashed.exit;

    const next = await startHealthy(env, controlUrl);
    const logs = next.stderr
      .join('')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'removed the lock of a flagops service that is no longer running',
        pid: crashed.child.pid,
      }),
    );
    next.child.kill('SIGTERM');
    expect(await next.exit).toBe(0);
    expect(existsSync(path.join(dataDir, 'flagops.lock'))).toBe(false);

    const again = await startHealthy(env, controlUrl);
    expect(again.stderr.join('')).not.toContain('removed the lock');
    again.child.kill('SIGTERM');
    expect(await again.exit).toBe(0);
  });

  describe('a port in use', () => {
    let squatter: Server;
    let taken: number;
    beforeAll(async () => {
      squatter = createServer();
      await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
      taken = (squatter.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => squatter.close(() => resolve())));

    it('exits non-zero naming FLAGOPS_CONTROL_PORT, without a stack trace, before the data directory is even made', async () => {
      const { env, dataDir } = await settings('control-port-taken', {});
      const p = start({ ...env, FLAGOPS_CONTROL_PORT: String(taken) });
      expect(await p.exit).toBe(1);
      const message = p.stderr.join('');
      expect(message).toBe(
        `flagops: port ${taken} on 127.0.0.1 is in use; stop what uses it, or set FLAGOPS_CONTROL_PORT to a free port\n`,
      );
      expect(message).not.toMatch(stackTrace);
      expect(existsSync(dataDir)).toBe(false);
    });

    it('exits non-zero naming FLAGOPS_EVAL_PORT, leaving an existing data directory empty: no keys, no repository', async () => {
      const { env, dataDir } = await settings('eval-port-taken');
      await mkdir(dataDir);
      const p = start({ ...env, FLAGOPS_EVAL_PORT: String(taken) });
      expect(await p.exit).toBe(1);
      expect(p.stderr.join('')).toContain('set FLAGOPS_EVAL_PORT to a free port');
      expect(readdirSync(dataDir)).toEqual([]);
    });

    it('names FLAGOPS_HOST when the address is not one of this machine', async () => {
      const { env, dataDir } = await settings('bad-host', { FLAGOPS_HOST: '192.0.2.1' });
      const p = start(env);
      expect(await p.exit).toBe(1);
      expect(p.stderr.join('')).toContain('cannot listen on 192.0.2.1: it is not an address of this machine; set FLAGOPS_HOST');
      expect(existsSync(dataDir)).toBe(false);
    });
  });

  describe('its command line', () => {
    it('--help and -h print what it runs, where its settings are and its exit codes, and start nothing', async () => {
      for (const flag of ['--help', '-h']) {
        const { env, dataDir, controlUrl } = await settings(`help${flag}`);
        const cwd = await mkdtemp(path.join(dir, 'cwd-'));
        // Without FLAGOPS_DATA_DIR too: the default ./data must not appear either.
        const { FLAGOPS_DATA_DIR: _unused, ...rest } = env;
        for (const vars of [env, rest]) {
          const p = startProcess(bundle.entry, vars, [flag], cwd);
          running.push(p);
          let stdout = '';
          p.child.stdout!.on('data', (chunk: Buffer) => {
            stdout += chunk.toString('utf8');
          });
          // 'close' comes once its output is read to the end, after 'exit'.
          const closed = new Promise((resolve) => p.child.once('close', resolve));
          expect(await p.exit).toBe(0);
          await closed;
          expect(stdout).toMatch(/^Usage: node dist\/main\.js/);
          expect(stdout).toContain('FLAGOPS_CONTROL_PORT');
          expect(stdout).toContain('"Settings" table of the README');
          expect(stdout).toMatch(/Exit codes:\n {2}0 .*\n {2}1 .*\n {2}2 /);
          expect(p.stderr.join('')).toBe('');
        }
        expect(existsSync(dataDir)).toBe(false);
        expect(readdirSync(cwd)).toEqual([]);
        await expect(fetch(`${controlUrl}/healthz`)).rejects.toThrow();
      }
    });

    it('refuses an argument it does not take in one line, exit 2, writing nothing', async () => {
      const { env, dataDir } = await settings('unknown-argument');
      const refused = startProcess(bundle.entry, env, ['--port', '5000']);
      running.push(refused);
      expect(await refused.exit).toBe(2);
      expect(refused.stderr.join('')).toBe(
        'flagops: unknown argument "--port"; the service takes none but --help (its settings are environment variables)\n',
      );
      expect(existsSync(dataDir)).toBe(false);
    });
  });

  it('refuses a bootstrap key shorter than 24 characters after its prefix, with a clear message, writing nothing', async () => {
    const { env, dataDir } = await settings('short-key', { FLAGOPS_BOOTSTRAP_KEYS: 'acme:svc_adm_devkey42' });
    const p = start(env);
    expect(await p.exit).toBe(2);
    expect(p.stderr.join('')).toBe(
      'flagops: FLAGOPS_BOOTSTRAP_KEYS entry 1 (organisation acme): the key has 8 characters after its svc_adm_ prefix; a bootstrap key needs at least 24 (32 random ones recommended, e.g. svc_adm_$(openssl rand -hex 16))\n',
    );
    expect(existsSync(dataDir)).toBe(false);
  });

  it('removes a ref lock left by a crash at start, so the first kill and config update succeed; while running it takes no lock from its holder and its 409 names no path', async () => {
    const admin = generateKey('admin');
    const { env, dataDir, controlUrl } = await settings('ref-lock', { FLAGOPS_BOOTSTRAP_KEYS: `acme:${admin}` });
    const api = () => httpClient(controlUrl, admin);
    const first = await startHealthy(env, controlUrl);
    const project = (await api().post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    const flag = (await api().post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout-v2' })).body;
    first.child.kill('SIGKILL');
    await first.exit;
    // What a SIGKILL between taking git's lock on main and renaming it over main leaves behind.
    const lock = path.join(dataDir, 'repos', 'acme.git', 'refs', 'heads', 'main.lock');
    writeFileSync(lock, '');

    const next = await startHealthy(env, controlUrl);
    expect(existsSync(lock)).toBe(false);
    const removed = next.stderr
      .join('')
      .split('\n')
      .filter((line) => line.includes('removed a ref lock'));
    expect(removed.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ level: 'warn', org: 'acme', lock: 'refs/heads/main.lock' }),
    ]);
    expect(removed[0]).not.toContain(dataDir);

    expect((await api().post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'errors' })).status).toBe(200);
    const update = await api().put(`/api/v1/flags/${flag.id}/environments/dev/config`, { enabled: true });
    expect(update.status).toBe(200);
    expect(update.body.environments.dev.enabled).toBe(true);

    // A lock taken while the service runs belongs to someone (a git process): writes wait, then give up
    // with 409 naming no path; a kill waits until the lock is released and then succeeds.
    writeFileSync(lock, '');
    const kill = api().post(`/api/v1/flags/${flag.id}/environments/staging/kill`, {});
    let killAnswered = false;
    void kill.then(() => {
      killAnswered = true;
    });
    const conflict = await api().put(`/api/v1/flags/${flag.id}/environments/dev/config`, { enabled: false });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('conflict');
    expect(conflict.body.error.message).not.toContain(dir);
    expect(conflict.body.error.message).not.toMatch(/\/(tmp|repos|refs)\//);
    expect(existsSync(lock)).toBe(true);
    // The kill was sent before the write that has just given up after waiting for the lock: it is waiting still.
    expect(killAnswered).toBe(false);
    await rm(lock);
    expect((await kill).status).toBe(200);
    next.child.kill('SIGTERM');
    expect(await next.exit).toBe(0);
  }, 30_000);

  it('removes at start the temporary pack files a crash left an hour or more ago, and keeps newer ones', async () => {
    const { env, dataDir, controlUrl } = await settings('temp-packs');
    const first = await startHealthy(env, controlUrl);
    first.child.kill('SIGKILL');
    await first.exit;
    const packs = path.join(dataDir, 'repos', 'default.git', 'objects', 'pack');
    await mkdir(packs, { recursive: true });
    const old = ['tmp_pack_Ab12Cd', 'tmp_idx_Ab12Cd'].map((name) => path.join(packs, name));
    const recent = path.join(packs, 'tmp_pack_Ef34Gh');
    for (const file of [...old, recent]) writeFileSync(file, 'unfinished');
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    for (const file of old) utimesSync(file, twoHoursAgo, twoHoursAgo);

    const next = await startHealthy(env, controlUrl);
    for (const file of old) expect(existsSync(file)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    const logged = next.stderr
      .join('')
      .split('\n')
      .filter((line) => line.includes('removed temporary files left by a crash'))
      .map((line) => JSON.parse(line));
    expect(logged).toEqual([expect.objectContaining({ level: 'warn', org: 'default', files: 2 })]);
    next.child.kill('SIGTERM');
    expect(await next.exit).toBe(0);
  });

  it('keeps what it creates under the data directory owner-only: the directory 0700, state files 0600', async () => {
    const { env, dataDir, controlUrl } = await settings('modes');
    const p = await startHealthy(env, controlUrl);
    const key = (await readFile(path.join(dataDir, 'state', 'initial-admin-key'), 'utf8')).trim();
    const api = httpClient(controlUrl, key);
    await api.post('/api/v1/keys', { kind: 'agent', name: 'ops-bot' });
    await api.post('/api/v1/projects', { name: 'Shop', slug: 'shop' });
    expect(existsSync(path.join(dataDir, 'state', 'replica-batches.jsonl'))).toBe(true);
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);

    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(dataDir, 'state')).mode & 0o777).toBe(0o700);
    expect(existsSync(path.join(dataDir, 'state', 'audit', 'default.json'))).toBe(true);
    expect(readableByOthers(path.join(dataDir, 'state'))).toEqual([]);
    expect(readableByOthers(path.join(dataDir, 'stats'))).toEqual([]);
  });
});

describe('starting on a damaged state file (the git runner beside the service, as installed)', () => {
  let dir: string;
  let made: string;
  let bundle: Awaited<ReturnType<typeof bundleMain>>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-damaged-state-'));
    bundle = await bundleMain({ gitRunner: true });
    // One data directory as a first start leaves it, copied for each damage.
    made = path.join(dir, 'made');
    const control = await freePort();
    const first = startProcess(bundle.entry, {
      FLAGOPS_DATA_DIR: made,
      FLAGOPS_CONTROL_PORT: String(control),
      FLAGOPS_EVAL_PORT: String(await freePort()),
    });
    await waitHealthy(`http://127.0.0.1:${control}/healthz`, first.child);
    // A webhook, whose reading of the audit trail begins at the start too: a damaged file it comes to first is
    // still the start's one line, not a retry logged with a stack trace.
    const key = (await readFile(path.join(made, 'state', 'initial-admin-key'), 'utf8')).trim();
    const created = await httpClient(`http://127.0.0.1:${control}`, key).post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook' });
    expect(created.status).toBe(201);
    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await bundle.remove();
  });

  // The signing key's and the trailers' files are named within the state directory: their errors can also come
  // from a repository opened while the service runs, whose answers name no path.
  // A content of null puts a directory where the file should be.
  const damages: Array<{ file: string; content: string | null; says: string; named?: string }> = [
    { file: 'pepper', content: 'c2hvcnQ=\n', says: 'is damaged: expected 32 base64-encoded bytes; .*restore it from a backup' },
    // 32 bytes still, but not the pepper the keys were hashed with: every key would be refused.
    {
      file: 'pepper',
      content: `${Buffer.alloc(32, 1).toString('base64')}\n`,
      says: 'is not the pepper the keys in .*keys.json were hashed with .*restore both files from one backup',
    },
    {
      file: 'commit-signing-key',
      content: 'short\n',
      says: 'is not a hexadecimal key of at least 64 digits; restore it from a backup',
      named: 'state file commit-signing-key',
    },
    {
      file: 'unsigned-trailers/default',
      content: 'zz\n',
      says: 'holds neither a commit id nor "none"; restore it from a backup',
      named: 'state file unsigned-trailers/default',
    },
    { file: 'webhooks.json', content: '{garbage\n', says: 'is not valid JSON: .*; it holds the webhooks' },
    { file: 'webhooks.json', content: 'null\n', says: 'is not a webhook state file; it holds the webhooks' },
    { file: 'sessions.json', content: '[{\n', says: 'is not valid JSON: .*; remove it to sign everybody out$' },
    {
      file: 'sessions.json',
      content: '[]\n',
      says: ': expected \\{ "version": 1, "sessions": \\[...\\] \\}; remove it to sign everybody out$',
    },
    { file: 'users.json', content: '[{\n', says: 'is not valid JSON: .*; it holds the dashboard users' },
    // A file of NULs (a crash on some file systems): the line shows them escaped, never writes them to the terminal.
    { file: 'webhooks.json', content: '\0'.repeat(64), says: "is not valid JSON: Unexpected token '\\\\u0000'.*; it holds the webhooks" },
    { file: 'webhooks.json', content: null, says: 'cannot be read \\(EISDIR\\): it must be a file .*; it holds the webhooks' },
    { file: 'pepper', content: null, says: 'cannot be read \\(EISDIR\\): it must be a file' },
    {
      file: 'commit-signing-key',
      content: null,
      says: 'cannot be read \\(EISDIR\\): it must be a file',
      named: 'state file commit-signing-key',
    },
  ];

  /** The files and folders under `dir` with their sizes: files read before the damaged one may be rewritten the same. */
  const filesOf = (dir: string) => snapshotOf(dir).map((line) => line.split(' ').slice(0, 2).join(' '));

  for (const [i, { file, content, says, named }] of damages.entries()) {
    const holding = content === null ? 'with a directory in its place' : `holding ${JSON.stringify(content.trim()).slice(0, 40)}`;
    it(`refuses ${file} ${holding}: one line naming it and what to do, exit 1, nothing left behind`, async () => {
      const dataDir = path.join(dir, `case-${i}`);
      cpSync(made, dataDir, { recursive: true, preserveTimestamps: true });
      const damaged = path.join(dataDir, 'state', file);
      if (content === null) {
        await rm(damaged, { force: true });
        await mkdir(damaged);
      } else writeFileSync(damaged, content);
      const before = filesOf(dataDir);
      const keysBefore = await readFile(path.join(dataDir, 'state', 'keys.json'), 'utf8');

      const p = startProcess(bundle.entry, {
        FLAGOPS_DATA_DIR: dataDir,
        FLAGOPS_CONTROL_PORT: String(await freePort()),
        FLAGOPS_EVAL_PORT: String(await freePort()),
      });
      expect(await p.exit).toBe(1);
      // The git runner, if it was started, has had its chance to write to the terminal the service left.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const message = p.stderr.join('');
      const name = (named ?? damaged).replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      expect(message).toMatch(new RegExp(`^flagops: ${name}:? ?${says}`, 'm'));
      expect(message.trim().split('\n')).toHaveLength(1);
      expect(hasControlCharacter(message.trim())).toBe(false);
      expect(message).not.toMatch(stackTrace);
      expect(filesOf(dataDir)).toEqual(before);
      expect(await readFile(path.join(dataDir, 'state', 'keys.json'), 'utf8')).toBe(keysBefore);
      if (content !== null) expect(await readFile(damaged, 'utf8')).toBe(content);
    });
  }
});
