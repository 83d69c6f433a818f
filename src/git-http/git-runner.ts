import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import type { Logger } from '../log/logger.js';
import { nodeEntry } from './node-entry.js';
import { type ExitStatus, FRAME_EXIT, FRAME_STDOUT, FrameReader, type RunRequest } from './runner-protocol.js';

/** A git process as the service sees it: ChildProcess's streams and events, wherever it runs. */
export interface GitProcess extends EventEmitter {
  stdin: NodeJS.WritableStream & { destroy(): void; on(event: 'error', listener: (err: Error) => void): unknown };
  stdout: PassThrough;
  stderr: PassThrough;
  /** Stops git and what it started. */
  stop(): void;
  // 'close' (code: number | null, signal: string | null) once its output is read; 'error' (err) when it could not start
}

const NICE = ['/usr/bin/nice', '/bin/nice'].find((file) => existsSync(file));

/**
 * Starts the git processes of git over HTTP from a small helper process (git-runner-process.ts) instead of
 * from the service itself. Forking copies the forking process's page tables, and the service holds every
 * organisation's parsed flags: at 400 MiB a fork stalled the event loop, evaluations included, for 4 to 30
 * ms, twice per clone. The helper is small, so its forks are cheap and stall nobody who matters; it runs at
 * the lowest priority (`nice`), and so does every git it starts. Its output still streams through the
 * service, at the pace the client reads it. Without a helper (it cannot start), git is started directly.
 */
export class GitRunner {
  private helper: Promise<{ socketPath: string; dir: string; child: ChildProcess } | null> | undefined;
  private closed = false;

  constructor(private readonly logger: Logger) {}

  run(args: string[], env: Record<string, string>): GitProcess {
    const git = new RunnerProcess();
    this.ready().then(
      (helper) => (helper ? git.connect(helper.socketPath, { args, env }) : git.adopt(spawnDirect(args, env))),
      (err) => git.fail(err as Error),
    );
    return git;
  }

  /** Stops the helper (git processes still running are stopped with it). */
  async close(): Promise<void> {
    this.closed = true;
    const helper = await this.helper?.catch(() => null);
    this.helper = undefined;
    if (!helper) return;
    helper.child.stdin?.end();
    helper.child.kill();
    await rm(helper.dir, { recursive: true, force: true });
  }

  private ready(): Promise<{ socketPath: string; dir: string; child: ChildProcess } | null> {
    if (this.closed) return Promise.reject(new Error('git over HTTP has stopped'));
    this.helper ??= this.start().catch((err) => {
      this.logger.warn('the git runner could not start; git runs inside the service', { err });
      return null;
    });
    return this.helper;
  }

  private async start(): Promise<{ socketPath: string; dir: string; child: ChildProcess }> {
    const dir = await mkdtemp(path.join(tmpdir(), 'flagops-git-'));
    const socketPath = path.join(dir, 'runner.sock');
    const [node, ...args] = [...nodeEntry(import.meta.url, 'git-runner-process'), socketPath];
    const [file, argv] = NICE ? [NICE, ['-n', '19', node, ...args]] : [node, args];
    const child = spawn(file, argv, { stdio: ['pipe', 'pipe', 'inherit'], env: { PATH: process.env.PATH } });
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (code) => reject(new Error(`the git runner exited with ${code}`)));
        createInterface({ input: child.stdout! }).once('line', (line) =>
          line === 'ready' ? resolve() : reject(new Error(`the git runner said ${line}`)),
        );
      });
    } catch (err) {
      child.kill();
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    // Gone (killed, crashed): the next request starts another.
    child.once('exit', () => {
      if (this.closed) return;
      this.logger.warn('the git runner stopped; starting another on the next git request');
      this.helper = undefined;
      void rm(dir, { recursive: true, force: true });
    });
    return { socketPath, dir, child };
  }
}

/** Runs git from this process (a git server in tests, or when the runner cannot start), at low priority. */
export function runGitDirectly(args: string[], env: Record<string, string>): GitProcess {
  const git = new RunnerProcess();
  git.adopt(spawnDirect(args, env));
  return git;
}

function spawnDirect(args: string[], env: Record<string, string>): ChildProcess {
  // Its own process group, so that stopping it stops what it started (upload-pack, pack-objects).

  const [file, argv] = NICE ? [NICE, ['-n', '19', 'git', ...args]] : ['git', args];
  return spawn(file, argv, { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
}

/** A git process run by the helper, or directly: the same streams and events either way. */
class RunnerProcess extends EventEmitter implements GitProcess {
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  private socket: net.Socket | undefined;
  private direct: ChildProcess | undefined;
  private stopped = false;
  private done = false;

  connect(socketPath: string, request: RunRequest): void {
    if (this.stopped) {
      this.finish({ code: null, signal: 'SIGTERM' });
      return;
    }
    const socket = net.connect({ path: socketPath, allowHalfOpen: true });
    this.socket = socket;
    let status: ExitStatus | null = null;
    const reader = new FrameReader((type, payload) => {
      if (type === FRAME_EXIT) status = JSON.parse(payload.toString('utf8')) as ExitStatus;
      else this.forward(type === FRAME_STDOUT ? this.stdout : this.stderr, payload, socket);
    });
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      const exit = status as ExitStatus | null;
      if (exit?.error) this.fail(new Error(exit.error));
      else this.finish(exit ?? { code: null, signal: 'SIGKILL' });
    });
    socket.write(`${JSON.stringify(request)}\n`);
    this.stdin.pipe(socket);
  }

  adopt(child: ChildProcess): void {
    this.direct = child;
    if (this.stopped) this.stop();
    child.stdin!.on('error', () => {});
    this.stdin.pipe(child.stdin!);
    child.stdout!.pipe(this.stdout, { end: false });
    child.stderr!.pipe(this.stderr, { end: false });
    child.on('error', (err) => this.fail(err));
    child.on('close', (code, signal) => this.finish({ code, signal }));
  }

  fail(err: Error): void {
    if (this.done) return;
    this.done = true;
    this.stdout.end();
    this.stderr.end();
    this.emit('error', err);
  }

  stop(): void {
    this.stopped = true;
    this.socket?.destroy();
    const pid = this.direct?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }

  /** Passes output on at the pace it is read: the helper (and git behind it) waits meanwhile. */
  private forward(stream: PassThrough, payload: Buffer, socket: net.Socket): void {
    if (stream.write(payload)) return;
    socket.pause();
    stream.once('drain', () => socket.resume());
  }

  /** 'close' comes once both outputs were read to their end, as for a ChildProcess. */
  private finish(status: ExitStatus): void {
    if (this.done) return;
    this.done = true;
    let open = 2;
    const ended = () => {
      if (--open === 0) this.emit('close', status.code, status.signal);
    };
    for (const stream of [this.stdout, this.stderr]) {
      stream.once('end', ended);
      stream.end();
      // Nobody reads stderr unless listening: let it flow so that 'end' comes.
      if (stream.listenerCount('data') === 0) stream.resume();
    }
  }
}
