import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/apps/cli/run.js';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const SAMPLE = join(ROOT, 'flags');

/** Runs `flagops <argv…>` in-process with captured output. */
export async function flagops(
  argv: string[],
  cwd = ROOT,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd, env });
  return { code, stdout, stderr };
}

/** A throwaway copy of the sample flags repository; remove it with the returned function. */
export function sampleCopy(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'flagops-cli-'));
  cpSync(SAMPLE, dir, { recursive: true });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
