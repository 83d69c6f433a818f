import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { bundleMain, freePort, type ServiceProcess, startProcess, waitHealthy } from './service-process.js';

/** Polls `check` until it returns true; fails, saying what was waited for, after PROMPTLY_MS. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + PROMPTLY_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${PROMPTLY_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Every Unix socket file under `dirs`. */
function socketsUnder(...dirs: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.isSocket()) out.push(file);
    }
  };
  for (const dir of dirs) walk(dir);
  return out;
}

/** Whether a process listens on the socket file (a dead one's socket refuses the connection). */
function listening(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const connection = net.connect({ path: socket }, () => {
      connection.destroy();
      resolve(true);
    });
    connection.on('error', () => resolve(false));
  });
}

async function liveSockets(...dirs: string[]): Promise<{ live: string[]; dead: string[] }> {
  const live: string[] = [];
  const dead: string[] = [];
  for (const socket of socketsUnder(...dirs)) ((await listening(socket)) ? live : dead).push(socket);
  return { live, dead };
}

function isZombie(pid: number): boolean {
  return spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.startsWith('Z');
}

describe('a service killed with SIGKILL', () => {
  let dir: string;
  let bundle: Awaited<ReturnType<typeof bundleMain>>;
  const running: ChildProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-killed-'));
    // With the git runner beside it, as the built package has it: the runner's socket is what a kill leaves.
    bundle = await bundleMain({ gitRunner: true });
  });
  afterAll(async () => {
    for (const child of running) child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    await bundle.remove();
  });

  /** Settings for a service on `dataDir`, with a temp directory of its own (TMPDIR) to look into. */
  async function settings(name: string, dataDir = path.join(dir, name, 'data')) {
    const temp = path.join(dir, name, 'tmp');
    await mkdir(temp, { recursive: true });
    const control = await freePort();
    const env = {
      FLAGOPS_DATA_DIR: dataDir,
      FLAGOPS_CONTROL_PORT: String(control),
      FLAGOPS_EVAL_PORT: String(await freePort()),
      TMPDIR: temp,
    };
    return { env, dataDir, temp, healthz: `http://127.0.0.1:${control}/healthz` };
  }

  async function startHealthy(env: Record<string, string>, healthz: string): Promise<ServiceProcess> {
    const service = startProcess(bundle.entry, env);
    running.push(service.child);
    await waitHealthy(healthz, service.child);
    return service;
  }

  async function stop(service: ServiceProcess): Promise<void> {
    service.child.kill('SIGTERM');
    expect(await service.exit).toBe(0);
  }

  it('does not block the next start while it is a zombie its parent has not reaped', async () => {
    const { env, dataDir, healthz } = await settings('zombie');
    // sh starts the service in the background and becomes sleep, which never waits for its children.
    const parent = spawn('sh', ['-c', '"$0" "$1" & echo $!; exec sleep 1000', process.execPath, bundle.entry], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    running.push(parent);
    const pid = await new Promise<number>((resolve) =>
      parent.stdout!.once('data', (chunk) => resolve(Number(String(chunk).split('\n')[0]))),
    );
    await waitHealthy(healthz, parent);
    expect(existsSync(path.join(dataDir, 'flagops.lock'))).toBe(true);
    process.kill(pid, 'SIGKILL');
    await until(`process ${pid} is a zombie`, () => isZombie(pid));

    const next = await startHealthy(env, healthz);
    expect(next.stderr.join('')).toContain('removed the lock of a flagops service that is no longer running');
    expect(isZombie(pid)).toBe(true);
    await stop(next);
  });

  it('leaves nothing behind once the next start has run, and a clean stop leaves nothing in the temp directory', async () => {
    const { env, dataDir, temp, healthz } = await settings('leftovers');
    const killed = await startHealthy(env, healthz);
    await until("the killed service's git runner listens", async () => (await liveSockets(temp, dataDir)).live.length === 1);
    killed.child.kill('SIGKILL');
    await killed.exit;

    const next = await startHealthy(env, healthz);
    await until('one git runner listens, and no socket of a dead one is left', async () => {
      const { live, dead } = await liveSockets(temp, dataDir);
      return live.length === 1 && dead.length === 0;
    });
    expect(readdirSync(temp)).toEqual([]);
    await stop(next);
    expect(readdirSync(temp)).toEqual([]);
    expect(socketsUnder(dataDir)).toEqual([]);
  });

  it('with a data directory too long for a socket path in it, keeps the socket in the temp directory, and a later start removes the one a killed service left', async () => {
    const name = 'long-path';
    const dataDir = path.join(dir, name, `data-${'x'.repeat(100)}`);
    const { env, temp, healthz } = await settings(name, dataDir);
    const killed = await startHealthy(env, healthz);
    await until("the killed service's git runner listens", async () => (await liveSockets(temp)).live.length === 1);
    const [leftover] = readdirSync(temp);
    killed.child.kill('SIGKILL');
    await killed.exit;
    expect(statSync(path.join(temp, leftover)).isDirectory()).toBe(true);

    const next = await startHealthy(env, healthz);
    await until("the killed service's socket directory is removed and the new runner listens", async () => {
      const { live, dead } = await liveSockets(temp);
      return !existsSync(path.join(temp, leftover)) && live.length === 1 && dead.length === 0;
    });
    expect(readdirSync(temp)).toHaveLength(1);
    await stop(next);
    expect(readdirSync(temp)).toEqual([]);
  });
});
