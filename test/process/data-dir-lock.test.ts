import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/foundations/log/logger.js';
import { DataDirLock, LOCK_FILE } from '../../src/foundations/process/data-dir-lock.js';
import { StartupError } from '../../src/foundations/process/startup-error.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'flagops-lock-'));
  dirs.push(dir);
  return dir;
}

function options() {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(line) });
  return { lines, options: { what: 'flagops service', setting: 'FLAGOPS_DATA_DIR', logger } };
}

/** The pid of a process that has exited: what a crashed service leaves in its lock. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

/**
 * A process that has exited but is not reaped yet: `sh` starts it in the background and then becomes `sleep`,
 * which never waits for its children. Killed with SIGKILL, it stays a zombie while `sleep` runs.
 */
async function zombie(): Promise<{ pid: number; end(): void }> {
  const parent = spawn('sh', ['-c', 'sleep 1000 & echo $!; exec sleep 1000'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = await new Promise<number>((resolve) => parent.stdout!.once('data', (chunk) => resolve(Number(String(chunk).trim()))));
  const deadline = Date.now() + PROMPTLY_MS;
  // Killed before `sh` became `sleep`, the child would be reaped by the shell and never be a zombie.
  const command = () => spawnSync('ps', ['-o', 'comm=', '-p', String(parent.pid)], { encoding: 'utf8' }).stdout.trim();
  while (command() !== 'sleep') {
    if (Date.now() > deadline) throw new Error(`sh (pid ${parent.pid}) did not become sleep`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  process.kill(pid, 'SIGKILL');
  while (!spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.startsWith('Z')) {
    if (Date.now() > deadline) throw new Error(`process ${pid} did not become a zombie`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { pid, end: () => parent.kill('SIGKILL') };
}

describe('the data directory lock', () => {
  it('is refused to a second holder in the same process, naming the directory and the pid', () => {
    const dir = dataDir();
    const lock = DataDirLock.acquire(dir, options().options);
    expect(() => DataDirLock.acquire(dir, options().options)).toThrow(
      new StartupError(
        `the data directory ${dir} is in use by another flagops service (pid ${process.pid}); stop that one first, or set FLAGOPS_DATA_DIR to another directory`,
      ),
    );
    expect(() => DataDirLock.assertFree(dir, options().options)).toThrow(StartupError);
    lock.release();
    expect(existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    DataDirLock.acquire(dir, options().options).release();
  });

  it('names what holds it, whichever program asks', () => {
    const dir = dataDir();
    const replica = DataDirLock.acquire(dir, { ...options().options, what: 'flagops eval replica', setting: '--data-dir' });
    try {
      expect(() => DataDirLock.assertFree(dir, options().options)).toThrow(
        `is in use by another flagops eval replica (pid ${process.pid}); stop that one first, or set FLAGOPS_DATA_DIR`,
      );
    } finally {
      replica.release();
    }
  });

  it('creates a missing data directory owner-only, and its lock file 0600', () => {
    const dir = path.join(dataDir(), 'new', 'data');
    const lock = DataDirLock.acquire(dir, options().options);
    try {
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(statSync(path.join(dir, LOCK_FILE)).mode & 0o777).toBe(0o600);
    } finally {
      lock.release();
    }
  });

  it('takes over the lock of a process that is gone, saying so in the log', () => {
    const dir = dataDir();
    const pid = deadPid();
    writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid, token: 'crashed', startedAt: '2026-01-01T00:00:00.000Z' }));
    DataDirLock.assertFree(dir, options().options);
    const { lines, options: opts } = options();
    const lock = DataDirLock.acquire(dir, opts);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'removed the lock of a flagops service that is no longer running', pid }),
    ]);
    expect(JSON.parse(readFileSync(path.join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('takes over the lock of a process that has exited but is not reaped yet (a zombie)', async () => {
    const dir = dataDir();
    const dead = await zombie();
    try {
      writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: dead.pid, token: 'killed', startedAt: '2026-01-01T00:00:00.000Z' }));
      DataDirLock.assertFree(dir, options().options);
      const { lines, options: opts } = options();
      DataDirLock.acquire(dir, opts).release();
      expect(lines.map((l) => JSON.parse(l))).toEqual([
        expect.objectContaining({ level: 'warn', msg: 'removed the lock of a flagops service that is no longer running', pid: dead.pid }),
      ]);
    } finally {
      dead.end();
    }
  });

  // Start times come from /proc (Linux); elsewhere a running pid counts as the holder.
  it.runIf(existsSync('/proc/self/stat'))(
    'takes over the lock of a pid that runs now but is another process (a reused pid: other start time)',
    () => {
      const dir = dataDir();
      writeFileSync(
        path.join(dir, LOCK_FILE),
        JSON.stringify({ pid: process.ppid, processStart: 1, token: 'reused', startedAt: '2026-01-01T00:00:00.000Z' }),
      );
      DataDirLock.acquire(dir, options().options).release();
    },
  );

  it('takes over a lock cut short by a crash between creating and writing it', () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, LOCK_FILE), '');
    DataDirLock.acquire(dir, options().options).release();
  });

  it('written as a link on a full disk, is honoured while its holder runs and taken over once it is gone', () => {
    const dir = dataDir();
    const lockFile = path.join(dir, LOCK_FILE);
    symlinkSync(`flagops-lock:${process.ppid}:::held-on-a-full-disk`, lockFile);
    expect(() => DataDirLock.acquire(dir, options().options)).toThrow(`is in use by another flagops service (pid ${process.ppid})`);
    expect(lstatSync(lockFile).isSymbolicLink()).toBe(true);
    rmSync(lockFile);
    symlinkSync(`flagops-lock:${deadPid()}:::crashed-on-a-full-disk`, lockFile);
    const lock = DataDirLock.acquire(dir, options().options);
    expect(JSON.parse(readFileSync(lockFile, 'utf8')).pid).toBe(process.pid);
    lock.release();
    expect(existsSync(lockFile)).toBe(false);
  });

  it('leaves a lock that is no longer its own when released', () => {
    const dir = dataDir();
    const lock = DataDirLock.acquire(dir, options().options);
    const lockFile = path.join(dir, LOCK_FILE);
    writeFileSync(lockFile, JSON.stringify({ pid: process.ppid, token: 'someone else', startedAt: '2026-01-01T00:00:00.000Z' }));
    expect(() => lock.verify()).toThrow(/was removed or replaced while starting/);
    lock.release();
    expect(existsSync(lockFile)).toBe(true);
  });
});
