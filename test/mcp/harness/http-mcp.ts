import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import type { McpEnv } from './spawn-mcp.js';

export interface HttpMcpProcess {
  /** The MCP endpoint the server logged, e.g. http://127.0.0.1:41234/mcp. */
  url: string;
  stderr(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `flagops-mcp --http --port 0 ...` and waits for the "listening" log line that carries its URL. */
export function startHttpMcp(serverFile: string, env: McpEnv, args: string[] = []): Promise<HttpMcpProcess> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [serverFile, '--http', '--port', '0', ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      ...(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>),
    },
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`flagops-mcp --http did not start within 15 s; stderr: ${stderr}`));
    }, 15_000);
    child.stdout.resume();
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const line = stderr.split('\n').find((l) => l.includes('"flagops-mcp listening"'));
      if (!line) return;
      clearTimeout(timer);
      resolve({
        url: (JSON.parse(line) as { url: string }).url,
        stderr: () => stderr,
        stop: () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`flagops-mcp --http exited with ${code} before listening; stderr: ${stderr}`));
    });
  });
}
