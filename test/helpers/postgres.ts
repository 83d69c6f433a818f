import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.mjs';

const run = promisify(execFile);

/** Debian's PostgreSQL binaries (the newest installed), or null when PostgreSQL is not installed. */
export const POSTGRES_BIN: string | null = (() => {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')) && existsSync(path.join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? path.join(root, versions[0], 'bin') : null;
})();

/** Why the PostgreSQL tests do not run here, or null when they do; test/global-setup.ts prints it once. */
export const POSTGRES_MISSING: string | null =
  POSTGRES_BIN === null
    ? 'the PostgreSQL tests were not run: they need initdb and pg_ctl in /usr/lib/postgresql/<version>/bin (Debian: apt-get install -y postgresql)'
    : null;

/**
 * A PostgreSQL cluster of a test file's own: made with initdb in a temporary directory, listening on a free
 * loopback port (its socket in that directory), trusting every local connection, run as the unprivileged
 * `postgres` user when the tests run as root (PostgreSQL refuses to run as root).
 */
export class PostgresCluster {
  private constructor(
    private readonly dir: string,
    readonly port: number,
  ) {}

  static async start(): Promise<PostgresCluster> {
    if (POSTGRES_BIN === null) throw new Error(POSTGRES_MISSING ?? '');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-pg-'));
    try {
      if (asRoot()) {
        const { stdout } = await run('id', ['-u', 'postgres']);
        const { stdout: gid } = await run('id', ['-g', 'postgres']);
        await chown(dir, Number(stdout.trim()), Number(gid.trim()));
      }
      const cluster = new PostgresCluster(dir, await freePort());
      await cluster.pg('initdb', ['-D', cluster.dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
      await cluster.startServer();
      return cluster;
    } catch (err) {
      // A server that did start (pg_ctl timed out waiting for it) is stopped before its dir goes.
      await new PostgresCluster(dir, 0).destroy();
      throw err;
    }
  }

  /** A new, empty database; its connection string. */
  async createDatabase(): Promise<string> {
    const name = `flagops_${Math.random().toString(36).slice(2, 10)}`;
    const client = new pg.Client({ connectionString: this.url('postgres') });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${name}`);
    } finally {
      await client.end();
    }
    return this.url(name);
  }

  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Stops the server as an operator would (`pg_ctl stop -m fast`: connections are cut); the data stays. */
  async stopServer(): Promise<void> {
    await this.pg('pg_ctl', ['-D', this.dataDir, '-m', 'fast', '-w', 'stop']);
  }

  /**
   * Stops the postmaster and every process it started (SIGSTOP): a server that hangs, its connections open and
   * answering nothing, as a machine that froze or swaps. `resume()` lets them go on (SIGCONT).
   */
  async hang(): Promise<void> {
    for (const pid of await this.processes()) process.kill(pid, 'SIGSTOP');
  }

  async resume(): Promise<void> {
    for (const pid of await this.processes()) process.kill(pid, 'SIGCONT');
  }

  /** The postmaster (the first line of its postmaster.pid) and its children. */
  private async processes(): Promise<number[]> {
    const postmaster = Number((await readFile(path.join(this.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const { stdout } = await run('pgrep', ['-P', String(postmaster)]).catch(() => ({ stdout: '' }));
    return [postmaster, ...stdout.split('\n').filter(Boolean).map(Number)];
  }

  async startServer(): Promise<void> {
    const options = `-c listen_addresses=127.0.0.1 -c port=${this.port} -c unix_socket_directories=${this.dir} -c fsync=off`;
    await this.pg('pg_ctl', ['-D', this.dataDir, '-l', path.join(this.dir, 'server.log'), '-o', options, '-w', 'start']);
  }

  /** Stops the server and removes its directory. */
  async destroy(): Promise<void> {
    await this.stopServer().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  private async pg(program: string, args: string[]): Promise<void> {
    const bin = path.join(POSTGRES_BIN ?? '', program);
    if (asRoot()) await run('runuser', ['-u', 'postgres', '--', bin, ...args], { cwd: this.dir });
    else await run(bin, args, { cwd: this.dir });
  }
}

function asRoot(): boolean {
  return process.getuid?.() === 0;
}
