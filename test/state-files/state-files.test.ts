import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StateFaultError } from '../../src/foundations/errors/kinds.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { FileControlState } from '../../src/foundations/state/files/file-control-state.js';
import { FileCountStore } from '../../src/foundations/state/files/file-count-store.js';
import { FileKeyStore } from '../../src/foundations/state/files/file-key-store.js';
import { FileSessionStore } from '../../src/foundations/state/files/file-session-store.js';
import { FileWebhookStore } from '../../src/foundations/state/files/file-webhook-store.js';
import type { DeliveryRecord, WebhookState } from '../../src/foundations/state/index.js';
import { readJsonStateFile, stateWriteFault, writeJsonStateFile } from '../../src/foundations/state-files/state-files.js';
import { fillDisk, smallDisk } from '../helpers/disk-faults.js';

/** A fresh temp dir, removed when the test ends. */
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-state-'));
  dirs.push(dir);
  return dir;
}

describe('runtime state files (keys, users, sessions)', () => {
  it('read as undefined before the first write, and back as written, readable by the owner only', async () => {
    const file = path.join(await tempDir(), 'keys.json');
    expect(await readJsonStateFile(file)).toBeUndefined();
    await writeJsonStateFile(file, { version: 1, keys: [] });
    expect(await readJsonStateFile(file)).toEqual({ version: 1, keys: [] });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).toBe('{\n  "version": 1,\n  "keys": []\n}\n');
  });

  it('refuse a damaged file with its name and what to do, instead of starting empty', async () => {
    const dir = await tempDir();
    const keys = path.join(dir, 'keys.json');
    const sessions = path.join(dir, 'sessions.json');
    await writeFile(keys, '{"version": 1, "keys": [');
    await writeFile(sessions, 'not json');
    await expect(new FileKeyStore(dir).list()).rejects.toThrow(`${keys} is not valid JSON`);
    await expect(new FileSessionStore(dir).list()).rejects.toThrow(
      /sessions\.json is not valid JSON: .*; remove it to sign everybody out$/,
    );
  });
});

describe('temporary files of state writes left by a killed service', () => {
  it('are removed at the next start, and nothing else: not those of a writer still running, nor other files', async () => {
    const dataDir = await tempDir();
    const state = path.join(dataDir, 'state');
    const stats = path.join(dataDir, 'stats');
    await FileControlState.open(dataDir);
    await mkdir(stats);
    // A pid that has ended: a process run to its end.
    const ended = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }));
    const leftovers = [`.keys.json.${ended}.0a1b2c3d.tmp`, `.pepper.${ended}.deadbeef.tmp`];
    for (const name of leftovers) await writeFile(path.join(state, name), '{"version":1,"organ');
    await writeFile(path.join(stats, `.evaluations.jsonl.${ended}.01234567.tmp`), '{');
    // Kept: a writer still running (`flagops user add` beside the service), this process's own current write,
    // and whatever is not named as a state write's temporary file.
    const kept = [
      `.users.json.${process.ppid}.0a1b2c3d.tmp`,
      `.sessions.json.${process.pid}.0a1b2c3d.tmp`,
      '.keys.json.999.dead.tmp',
      `keys.json.${ended}.0a1b2c3d.tmp`,
      'notes.tmp',
    ];
    for (const name of kept) await writeFile(path.join(state, name), 'x');
    const logged: Array<{ message: string; fields: unknown }> = [];
    const logger = { ...silentLogger, warn: (message: string, fields?: unknown) => logged.push({ message, fields }) };

    await FileControlState.open(dataDir, { logger });
    expect((await readdir(state)).sort()).toEqual([...kept].sort());
    expect(await readdir(stats)).toEqual([]);
    expect(logged).toEqual([
      { message: 'removed temporary state files left by a crash', fields: { dir: 'state', files: expect.arrayContaining(leftovers) } },
      {
        message: 'removed temporary state files left by a crash',
        fields: { dir: 'stats', files: [`.evaluations.jsonl.${ended}.01234567.tmp`] },
      },
    ]);
  });

  it("are those of this process's pid too when older than this process (a pid reused, as 1 in a container)", async () => {
    const dataDir = await tempDir();
    const state = path.join(dataDir, 'state');
    await FileControlState.open(dataDir);
    const leftover = path.join(state, `.keys.json.${process.pid}.0a1b2c3d.tmp`);
    await writeFile(leftover, '{');
    const before = new Date(Date.now() - process.uptime() * 1000 - 60_000);
    await utimes(leftover, before, before);
    await FileControlState.open(dataDir);
    expect(await readdir(state)).toEqual([]);
  });
});

describe('a state file on a full disk', () => {
  let disk: string | undefined;
  const session = { id: 'ses_1', tokenHash: 'h1', org: 'acme', userId: 'usr_1', createdAt: 'a', lastSeenAt: 'a', expiresAt: 'b' };
  const count = { hour: 0, scope: 'acme/prj/prod', flagKey: 'checkout', variation: 'on', count: 3 };

  beforeAll(async () => {
    disk = await smallDisk('1m');
    if (!disk) {
      // Said, as for a missing tool: CI runs as root on a machine that lets it mount, and runs them.
      process.stderr.write(
        '\nthe full-disk tests of state files did not run: they mount a 1 MiB tmpfs, which needs root and permission to mount\n\n',
      );
      return;
    }
    await new FileSessionStore(disk).create(session);
    const counts = new FileCountStore(path.join(disk, 'stats'));
    await counts.read(0, () => {});
    await counts.add([count]);
    await counts.close();
    fillDisk(path.join(disk, 'filler'));
  });
  afterAll(async () => {
    if (!disk) return;
    execFileSync('umount', ['--lazy', disk]); // lazy: a file a failed test left open does not keep it mounted
    await rm(disk, { recursive: true, force: true });
  });

  it('refuses a change with 503 unavailable saying the disk is full, and keeps what the file held', async ({ skip }) => {
    if (!disk) return skip();
    const before = await readFile(path.join(disk, 'sessions.json'), 'utf8');
    const store = new FileSessionStore(disk);
    const failure = await store.create({ ...session, id: 'ses_2' }).catch((err) => err);
    expect(failure).toBeInstanceOf(StateFaultError);
    expect(failure).toMatchObject({
      code: 'unavailable',
      message: 'the state file sessions.json cannot be written: no space left on the device (ENOSPC)',
    });
    expect(await readFile(path.join(disk, 'sessions.json'), 'utf8')).toBe(before);
    expect((await store.list()).map((s) => s.id)).toEqual(['ses_1']);
    expect((await readdir(disk)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses counts the same way, and cuts the log back so that a retry cannot count twice', async ({ skip }) => {
    if (!disk) return skip();
    const log = path.join(disk, 'stats', 'evaluations.jsonl');
    const before = await readFile(log, 'utf8');
    const counts = new FileCountStore(path.join(disk, 'stats'));
    await counts.read(0, () => {});
    // More than the room left in the log's last page, which a full tmpfs still takes.
    const many = Array.from({ length: 20_000 }, (_, i) => ({ ...count, flagKey: `flag-${i}` }));
    try {
      await expect(counts.add(many)).rejects.toThrow(
        'the state file evaluations.jsonl cannot be written: no space left on the device (ENOSPC)',
      );
    } finally {
      await counts.close();
    }
    expect(await readFile(log, 'utf8')).toBe(before);
  });
});

describe('webhooks.json when the disk refuses a write', () => {
  const hook = { id: 'whk_1', org: 'acme', url: 'https://example.test/1', actions: [], secret: 'a-secret-of-16-chars', createdAt: 'a' };
  const delivery: DeliveryRecord = {
    id: 'dlv_1',
    webhookId: 'whk_1',
    auditId: 'c'.repeat(40),
    action: 'kill',
    status: 'delivered',
    attempts: 1,
    createdAt: 'a',
  };

  /** A store whose writes are recorded, and fail while `refusing.now` is true. */
  async function refusingStore() {
    const dir = await tempDir();
    const written: WebhookState[] = [];
    const refusing = { now: false };
    const store = new FileWebhookStore(dir, {
      write: async (file, state) => {
        if (refusing.now) throw stateWriteFault(file, Object.assign(new Error('full'), { code: 'ENOSPC' }));
        written.push(structuredClone(state));
      },
    });
    return { store, written, refusing };
  }

  it('keeps a webhook whose removal was refused, with its deliveries, in memory and in the next write', async () => {
    const { store, written, refusing } = await refusingStore();
    await store.createWebhook(hook);
    await store.advance('acme', undefined, 'c1', { added: [delivery] });
    refusing.now = true;
    await expect(store.removeWebhook('acme', 'whk_1')).rejects.toBeInstanceOf(StateFaultError);
    const kept = await store.read();
    expect(kept.webhooks.map((w) => w.id)).toEqual(['whk_1']);
    expect(kept.deliveries.map((d) => d.id)).toEqual(['dlv_1']);
    refusing.now = false;
    await store.updateDeliveries({}, 'now');
    expect(written.at(-1)?.webhooks.map((w) => w.id)).toEqual(['whk_1']);
    expect(written.at(-1)?.deliveries.map((d) => d.id)).toEqual(['dlv_1']);
    await store.removeWebhook('acme', 'whk_1');
    expect(written.at(-1)).toMatchObject({ webhooks: [], deliveries: [] });
    expect(await store.read()).toMatchObject({ webhooks: [], deliveries: [] });
  });

  it('leaves the position where it was when moving it was refused, so the same move is taken later', async () => {
    const { store, refusing } = await refusingStore();
    await store.createWebhook(hook);
    refusing.now = true;
    await expect(store.advance('acme', undefined, 'c1', { added: [delivery] })).rejects.toBeInstanceOf(StateFaultError);
    expect(await store.read()).toMatchObject({ cursors: {}, deliveries: [] });
    refusing.now = false;
    expect(await store.advance('acme', undefined, 'c1', { added: [delivery] })).toBe(true);
    expect(await store.read()).toMatchObject({ cursors: { acme: 'c1' }, deliveries: [{ id: 'dlv_1' }] });
  });
});

describe('stateWriteFault', () => {
  it('leaves an error that is no refusal of the file system as it is', () => {
    const err = Object.assign(new Error('gone'), { code: 'ENOENT' });
    expect(stateWriteFault('/x/keys.json', err)).toBe(err);
    expect(stateWriteFault('/x/keys.json', Object.assign(new Error('full'), { code: 'EDQUOT' }))).toMatchObject({
      message: 'the state file keys.json cannot be written: disk quota exceeded (EDQUOT)',
    });
  });
});
