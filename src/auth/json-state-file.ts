import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from './atomic-write.js';

/**
 * A runtime state file under `<dataDir>/state/` (keys, users, sessions): its parsed JSON, or undefined when it
 * does not exist yet. Not JSON is an error naming the file; `hint` says what the operator can do about it.
 */
export async function readJsonStateFile(file: string, hint = ''): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not valid JSON: ${(err as Error).message}${hint}`);
  }
}

/** Writes a state file readable by its owner only, atomically: a crash leaves the old content or the new. */
export async function writeJsonStateFile(file: string, content: unknown): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(content, null, 2)}\n`, 0o600);
}
