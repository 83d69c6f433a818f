/**
 * The Go and Python SDKs (sdks/go, sdks/python) as the tests run them: with Debian's `go` and `python3 -m pytest`,
 * and why a suite does not run when either is missing (test/global-setup.ts prints it once per run).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const ROOT = path.resolve(new URL('../..', import.meta.url).pathname);
export const PYTHON_SDK = path.join(ROOT, 'sdks', 'python');
export const GO_SDK = path.join(ROOT, 'sdks', 'go');

function works(file: string, args: string[]): boolean {
  try {
    execFileSync(file, args, { stdio: 'ignore', timeout: 60_000 });
    return true;
  } catch {
    return false;
  }
}

/** Why the Python SDK's tests do not run here, or null when they do. */
export const PYTHON_MISSING: string | null = !existsSync(PYTHON_SDK)
  ? 'the Python SDK tests were not run: this checkout has no sdks/python'
  : !works('python3', ['-c', 'import sys; assert sys.version_info >= (3, 11)'])
    ? 'the Python SDK tests were not run: they need python3 3.11 or newer (Debian: apt-get install -y python3)'
    : !works('python3', ['-m', 'pytest', '--version'])
      ? 'the Python SDK tests were not run: they need pytest (Debian: apt-get install -y python3-pytest)'
      : null;

/** Why the Go SDK's tests do not run here, or null when they do. */
export const GO_MISSING: string | null = !existsSync(path.join(GO_SDK, 'go.mod'))
  ? 'the Go SDK tests were not run: this checkout has no sdks/go'
  : !works('go', ['version'])
    ? 'the Go SDK tests were not run: they need the Go toolchain (Debian: apt-get install -y golang-go)'
    : null;

/** Go with no module proxy and no checksum database: the SDK is standard library only and must build offline. */
export const GO_ENV = { ...process.env, GOPROXY: 'off', GOFLAGS: '-mod=mod', GONOSUMDB: '*', GOTOOLCHAIN: 'local' };

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; never rejects for a non-zero exit (the caller asserts on `code`). */
export async function runTool(
  file: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      timeout: options.timeoutMs ?? 600_000,
      maxBuffer: 256 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string; message: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? e.message };
  }
}

/** Builds the Go SDK's checking command once into `dir`; the path of the binary. */
export async function buildGoCommand(dir: string): Promise<string> {
  const binary = path.join(dir, 'flagops-go');
  const built = await runTool('go', ['build', '-o', binary, './cmd/flagops'], { cwd: GO_SDK, env: GO_ENV });
  if (built.code !== 0) throw new Error(`go build ./cmd/flagops failed:\n${built.stderr}`);
  return binary;
}

/** A long-running checking command (`watch`): its lines as they come, and a stop that ends it. */
export function startWatch(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  let buffer = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffer += chunk;
    let nl = buffer.indexOf('\n');
    while (nl !== -1) {
      lines.push(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf('\n');
    }
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    lines,
    /** Resolves with line number `n` (0-based) once printed; rejects after `ms`. */
    async line(n: number, ms = 15_000): Promise<string> {
      const deadline = Date.now() + ms;
      while (lines.length <= n) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no line ${n + 1} within ${ms} ms; stdout so far: ${lines.join('\n')}\nstderr: ${stderr}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return lines[n];
    },
    async stop(): Promise<number | null> {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
