import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type GitProcess, GitRunner, runGitDirectly } from '../../src/apps/git-http/git-runner.js';
import { nodeEntry } from '../../src/apps/git-http/node-entry.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';

const env = { PATH: process.env.PATH ?? '', HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1' };

/** Everything a git process wrote, and how it ended. */
function outcome(git: GitProcess): Promise<{ stdout: string; stderr: string; code: number | null; signal: string | null }> {
  let stdout = '';
  let stderr = '';
  git.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  git.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    git.once('error', reject);
    git.once('close', (code: number | null, signal: string | null) => resolve({ stdout, stderr, code, signal }));
  });
}

describe('the git runner', () => {
  const runner = new GitRunner(silentLogger);
  afterAll(() => runner.close());

  it('runs git in a process of its own, not forked from this one', async () => {
    // An alias starting with ! runs in a shell whose parent is git; the parent of git is whoever started it.
    const git = runner.run(['-c', 'alias.parent=!ps -o ppid= -p $PPID', 'parent'], env);
    git.stdin.end();
    const { stdout, code } = await outcome(git);
    expect(code).toBe(0);
    expect(Number(stdout.trim())).toBeGreaterThan(0);
    expect(Number(stdout.trim())).not.toBe(process.pid);
  });

  it('runs git in the session of its starter, where its low priority holds (a session is a scheduling group of its own)', async () => {
    // The shell of an alias runs in git's session; its parent is git, and git's parent is who started it.
    const sessions = ['-c', 'alias.sessions=!echo $(ps -o sid= -p $PPID) $(ps -o sid= -p $(ps -o ppid= -p $PPID))', 'sessions'];
    for (const start of [() => runner.run(sessions, env), () => runGitDirectly(sessions, env)]) {
      const git = start();
      git.stdin.end();
      const { stdout, code } = await outcome(git);
      expect(code).toBe(0);
      const [gitSession, starterSession] = stdout.trim().split(/\s+/);
      expect(gitSession).toBe(starterSession);
    }
  });

  it('passes standard input in and output out, with the exit status', async () => {
    const git = runner.run(['hash-object', '--stdin'], env);
    git.stdin.end('hello\n');
    expect(await outcome(git)).toEqual({ stdout: 'ce013625030ba8dba906f756967f9e9ca394464a\n', stderr: '', code: 0, signal: null });
    const failing = runner.run(['no-such-command'], env);
    failing.stdin.end();
    const failed = await outcome(failing);
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain('no-such-command');
  });

  it('streams a large output whole, at the pace it is read', async () => {
    const git = runner.run(['-c', 'alias.big=!head -c 20000000 /dev/zero', 'big'], env);
    git.stdin.end();
    let bytes = 0;
    git.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      // A slow reader: the runner must wait rather than buffer everything.
      git.stdout.pause();
      setImmediate(() => git.stdout.resume());
    });
    const code = await new Promise((resolve) => git.once('close', resolve));
    expect(code).toBe(0);
    expect(bytes).toBe(20_000_000);
  });

  it('stops a git that is still running, and what it started', async () => {
    const git = runner.run(['cat-file', '--batch'], env); // answers each line of input, and waits for the next
    const ended = outcome(git);
    const answered = new Promise((resolve) => git.stdout.once('data', resolve));
    git.stdin.write('no-such-object\n');
    await answered; // running, and waiting for input that never comes
    git.stop();
    const { code } = await ended;
    expect(code).toBeNull();
  });
});

/** The pid of this process's git runner helper that listens on `socket`, if one runs. */
function helperPid(socket: string): number | undefined {
  const lines = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' }).split('\n');
  for (const line of lines) {
    const [pid, ppid, ...args] = line.trim().split(/\s+/);
    if (Number(ppid) === process.pid && args.join(' ').endsWith(socket)) return Number(pid);
  }
  return undefined;
}

describe('the git runner with a data directory', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'flagops-runner-'));
  const socket = path.join(dataDir, 'git-runner', 'runner.sock');
  const runner = new GitRunner(silentLogger, { dataDir });
  afterAll(async () => {
    await runner.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const hash = async () => {
    const git = runner.run(['hash-object', '--stdin'], env);
    git.stdin.end('hello\n');
    return (await outcome(git)).stdout;
  };

  it('listens in <data dir>/git-runner, which only its user can enter', async () => {
    expect(await hash()).toBe('ce013625030ba8dba906f756967f9e9ca394464a\n');
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(path.dirname(socket)).mode & 0o777).toBe(0o700);
  });

  it('starts another helper in the same place when its helper dies, the dead one’s socket removed first', async () => {
    const pid = helperPid(socket);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid!, 'SIGKILL');
    const deadline = Date.now() + PROMPTLY_MS;
    // Until the runner has seen it die and started another (helperRunning starts one when there is none).
    const noNewOne = () => [undefined, pid].includes(helperPid(socket));
    while (!(await runner.helperRunning()) || noNewOne()) {
      if (Date.now() > deadline) throw new Error('no new helper');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await hash()).toBe('ce013625030ba8dba906f756967f9e9ca394464a\n');
    const next = helperPid(socket);
    expect(next).toBeGreaterThan(0);
    expect(next).not.toBe(pid);
    expect(statSync(socket).isSocket()).toBe(true);
  });

  it('removes its folder when closed', async () => {
    await runner.close();
    expect(existsSync(path.dirname(socket))).toBe(false);
  });
});

describe('the git runner process when the service has gone before it is ready', () => {
  it('exits quietly, without a stack trace, when "ready" cannot be written (a service that failed to start)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'flagops-runner-gone-'));
    try {
      const [node, ...args] = nodeEntry(new URL('../../src/apps/git-http/git-runner.ts', import.meta.url).href, 'git-runner-process');
      const child = spawn(node, [...args, path.join(dir, 'runner.sock')], { stdio: ['pipe', 'pipe', 'pipe'] });
      // What a service exiting leaves: the reading end of the runner's standard output closed.
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
      expect(stderr).toBe('');
      expect(code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
