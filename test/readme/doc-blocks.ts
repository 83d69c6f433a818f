import { spawn } from 'node:child_process';

/** The fenced `sh` blocks of a Markdown text (or of its section headed `heading`), in order. */
export function shellBlocks(text: string, heading?: string): string[] {
  let section = text;
  if (heading !== undefined) {
    const start = text.indexOf(`## ${heading}`);
    const end = text.indexOf('\n## ', start + 3);
    section = text.slice(start, end < 0 ? undefined : end);
  }
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/** Runs a docs block word for word in bash, stdout and stderr together. */
export function runBlock(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    child.once('close', (code) => resolve({ code, out }));
  });
}
