import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, waitHealthy } from './service-process.js';

/**
 * `npm start` as a process manager runs it: the pid it holds is npm's, so a SIGTERM to that pid must stop the
 * service itself (npm passes the signal to its script's process, which must therefore be node, not a shell).
 * Runs the checkout's built service (`dist/`, as `npm ci` leaves it).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('npm start', () => {
  let dir: string;
  const started: ChildProcess[] = [];
  const servicePids: number[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-npm-start-'));
  });
  afterAll(async () => {
    // Whatever the outcome, no service is left behind.
    for (const pid of servicePids) if (running(pid)) process.kill(pid, 'SIGKILL');
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  /** `npm start` on free ports and a fresh data directory, in a process group of its own. */
  async function npmStart(name: string) {
    const control = await freePort();
    const dataDir = path.join(dir, name);
    const child = spawn('npm', ['start'], {
      cwd: ROOT,
      env: {
        ...process.env,
        FLAGOPS_DATA_DIR: dataDir,
        FLAGOPS_CONTROL_PORT: String(control),
        FLAGOPS_EVAL_PORT: String(await freePort()),
        npm_config_update_notifier: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    started.push(child);
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitHealthy(`http://127.0.0.1:${control}/healthz`, child);
    // The lock names the service's own pid: node's, not npm's.
    const lock = path.join(dataDir, 'flagops.lock');
    const pid = JSON.parse(await readFile(lock, 'utf8')).pid as number;
    servicePids.push(pid);
    expect(pid).not.toBe(child.pid);
    return { npm: child, pid, lock, exit, output: () => output };
  }

  it('stops the service cleanly when npm’s pid gets SIGTERM: node exits and the data directory lock is released', async () => {
    const { npm, pid, lock, exit, output } = await npmStart('npm-pid');
    npm.kill('SIGTERM');
    await until('the service process exits', () => !running(pid));
    await exit;
    expect(output()).toContain('"msg":"flagops stopped"');
    expect(existsSync(lock)).toBe(false);
  }, 60_000);

  it('stops cleanly when the whole process group gets SIGTERM (systemd’s default), node getting it twice', async () => {
    const { npm, pid, lock, exit, output } = await npmStart('group');
    process.kill(-npm.pid!, 'SIGTERM');
    await until('the service process exits', () => !running(pid));
    await exit;
    expect(output()).toContain('"msg":"flagops stopped"');
    expect(existsSync(lock)).toBe(false);
  }, 60_000);
});
