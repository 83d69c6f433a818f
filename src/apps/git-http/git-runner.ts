import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import type { Logger } from '../../foundations/log/logger.js';
import { nodeEntry } from './node-entry.js';
import {
  type ExitStatus,
  FRAME_EXIT,
  FRAME_STDOUT,
  FrameReader,
  type HandOffMessage,
  type HandOffReport,
  type RunRequest,
  type StopMessage,
} from './runner-protocol.js';
import { makeRunnerSocket, type RunnerSocket } from './runner-socket.js';
import { NICE, spawnGit, stopGit } from './spawn-git.js';

/** A git process as the service sees it: ChildProcess's streams and events, wherever it runs. */
export interface GitProcess extends EventEmitter {
  stdin: NodeJS.WritableStream & { destroy(): void; on(event: 'error', listener: (err: Error) => void): unknown };
  stdout: PassThrough;
  stderr: PassThrough;
  /** Stops git and what it started. */
  stop(): void;
  // 'close' (code: number | null, signal: string | null) once its output is read; 'error' (err) when it could not start
}

/** A request answered by the runner on the client's own connection (runner-protocol.ts). */
export type HandOffRequest = Pick<HandOffMessage, 'args' | 'env' | 'body' | 'headers'>;
/** How a handed-off request ended. */
export type HandOffOutcome = Omit<HandOffReport, 'type' | 'id'>;

export interface GitRunnerOptions {
  /** When the service stops, how long answers the runner is writing to handed-off connections may still take. */
  stopGraceMs?: number;
  /**
   * The service's data directory, which keeps the runner's socket (or the note of where it is), so that what a
   * killed service left is found and removed by the next start (runner-socket.ts). Default: the temp directory.
   */
  dataDir?: string;
}

/** A clone of a big repository takes seconds; one still running this long after a stop is cut off. */
export const STOP_GRACE_MS = 10_000;

interface Helper {
  socket: RunnerSocket;
  child: ChildProcess;
}

/**
 * Starts the git processes of git over HTTP from a small helper process (git-runner-process.ts) instead of
 * from the service itself. Forking copies the forking process's page tables, and the service holds every
 * organisation's parsed flags: at 400 MiB a fork stalled the event loop, evaluations included, for 4 to 30
 * ms, twice per clone. The helper is small, so its forks are cheap and stall nobody who matters; it runs at
 * the lowest priority (`nice`), and so does every git it starts. Its output streams through the service, at
 * the pace the client reads it (run), or, for clones and fetches, the client's connection itself is handed to
 * the helper, which writes the answer to it (handOff): then the pack data never enters the service's event
 * loop, where evaluations would wait behind it. Without a helper (it cannot start), git is started directly.
 */
export class GitRunner {
  private helper: Promise<Helper | null> | undefined;
  /** The helper once it runs, for what must happen in the same turn of the event loop (handOff). */
  private started: Helper | undefined;
  private closed = false;
  private nextId = 0;
  /** Handed-off requests not reported on yet, by id: each one's resolve. */
  private readonly handedOff = new Map<number, (outcome: HandOffOutcome) => void>();
  private readonly stopGraceMs: number;
  private readonly dataDir: string | undefined;
  /** The socket of a helper that exited being removed: the next one may make its socket in the same place. */
  private removing: Promise<void> = Promise.resolve();

  constructor(
    private readonly logger: Logger,
    options: GitRunnerOptions = {},
  ) {
    this.stopGraceMs = options.stopGraceMs ?? STOP_GRACE_MS;
    this.dataDir = options.dataDir;
  }

  run(args: string[], env: Record<string, string>): GitProcess {
    const git = new RunnerProcess();
    this.ready().then(
      (helper) => (helper ? git.connect(helper.socket.path, { args, env }) : git.adopt(spawnGit(args, env, true))),
      (err) => git.fail(err as Error),
    );
    return git;
  }

  /** Whether the helper runs (it is started if need be): only then can a connection be handed to it. */
  async helperRunning(): Promise<boolean> {
    const helper = await this.ready().catch(() => null);
    return helper?.child.connected === true;
  }

  /**
   * Hands the client's connection to the helper, which runs git and writes the whole response to it; this
   * process no longer reads or writes that socket (Node detaches it from the HTTP server as it sends it).
   * Resolves once git has exited and its answer is written (or the client went away); null, and the socket
   * untouched, when there is no helper to take it (call helperRunning first, and hand off in the same turn of
   * the event loop).
   */
  handOff(socket: net.Socket, request: HandOffRequest): Promise<HandOffOutcome> | null {
    const child = this.started?.child;
    if (!child?.connected || this.closed) return null;
    const id = ++this.nextId;
    const message: HandOffMessage = { type: 'serve', id, ...request };
    return new Promise((resolve) => {
      this.handedOff.set(id, resolve);
      child.send(message, socket, { keepOpen: false }, (err) => {
        if (!err) return;
        // Sent or not, the socket is no longer this process's: the client sees its connection close.
        this.handedOff.delete(id);
        resolve({ status: 0, code: null, signal: null, bytes: 0, stderr: '', clientGone: false, error: err.message });
      });
    });
  }

  /**
   * The service is stopping: answers being written to handed-off connections (and any handed off from now
   * on) get the grace period to finish; then the helper stops their git and closes their connections. The
   * HTTP server's close waits for those connections (Node tracks sockets sent to a child process).
   */
  finishHandedOff(): void {
    const child = this.started?.child;
    if (!child?.connected) return;
    const message: StopMessage = { type: 'stop', graceMs: this.stopGraceMs };
    child.send(message, (err: Error | null) => {
      if (err) this.logger.warn('could not tell the git runner to finish', { err });
    });
  }

  /** Stops the helper (git processes still running are stopped with it). */
  async close(): Promise<void> {
    this.closed = true;
    const helper = await this.helper?.catch(() => null);
    this.helper = undefined;
    await this.removing;
    if (!helper) return;
    helper.child.stdin?.end();
    helper.child.kill();
    await helper.socket.remove();
  }

  private ready(): Promise<Helper | null> {
    if (this.closed) return Promise.reject(new Error('git over HTTP has stopped'));
    this.helper ??= this.start().catch((err) => {
      this.logger.warn('the git runner could not start; git runs inside the service', { err });
      return null;
    });
    return this.helper;
  }

  private async start(): Promise<Helper> {
    const entry = nodeEntry(import.meta.url, 'git-runner-process');
    // Not beside this module (the service bundled into one file): say so in the log, not with node's stack.
    if (!existsSync(entry[entry.length - 1])) throw new Error('the git runner module is not installed beside the service');
    await this.removing;
    const socket = await makeRunnerSocket(this.dataDir);
    const [node, ...args] = [...entry, socket.path];
    const [file, argv] = NICE ? [NICE, ['-n', '19', node, ...args]] : [node, args];
    // The IPC channel carries handed-off connections; 'advanced' serialization sends request bodies as bytes.
    // In a process group of its own: a signal to the service's group (Ctrl-C, systemd stopping the unit) reaches
    // the service, whose stop lets the clones in flight finish, not the runner and its git processes directly.
    // It ends with the service all the same: its stdin and IPC channel close then.
    const child = spawn(file, argv, {
      stdio: ['pipe', 'pipe', 'inherit', 'ipc'],
      serialization: 'advanced',
      env: { PATH: process.env.PATH },
      detached: true,
    });
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
      await socket.remove();
      throw err;
    }
    child.on('message', (report: HandOffReport) => this.reported(report));
    const helper = { socket, child };
    this.started = helper;
    // Gone (killed, crashed): the next request starts another. Its handed-off connections closed with it.
    child.once('exit', () => {
      if (this.started === helper) this.started = undefined;
      for (const [id, resolve] of this.handedOff) {
        this.handedOff.delete(id);
        resolve({ status: 0, code: null, signal: 'SIGKILL', bytes: 0, stderr: '', clientGone: false, error: 'the git runner stopped' });
      }
      if (this.closed) return;
      this.logger.warn('the git runner stopped; starting another on the next git request');
      this.helper = undefined;
      this.removing = socket.remove().catch((err) => this.logger.warn("could not remove the git runner's socket", { err }));
    });
    return helper;
  }

  private reported(report: HandOffReport): void {
    const resolve = this.handedOff.get(report.id);
    if (!resolve) return;
    this.handedOff.delete(report.id);
    const { type: _type, id: _id, ...outcome } = report;
    resolve(outcome);
  }
}

/** Runs git from this process (a git server in tests, or when the runner cannot start), at low priority. */
export function runGitDirectly(args: string[], env: Record<string, string>): GitProcess {
  const git = new RunnerProcess();
  git.adopt(spawnGit(args, env, true));
  return git;
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
    // The runner has sent all there is (it ends its side once git has exited): the rest of git's input, if
    // any, has nobody to read it. Waiting for it to be written would wait for good, so the socket closes now.
    socket.on('end', () => socket.destroy());
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
    if (this.direct) stopGit(this.direct);
  }

  /** Passes output on at the pace it is read: the helper (and git behind it) waits meanwhile. */
  private forward(stream: PassThrough, payload: Buffer, socket: net.Socket): void {
    if (stream.write(payload) || socket.isPaused()) return; // one chunk can hold several frames: wait once
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
