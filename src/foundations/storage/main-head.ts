import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { StorageFaultError } from '../errors/kinds.js';
import { MAIN_REF, readRef } from './git/refs.js';

/**
 * Main's head as the repository's files hold it. An absent main means an empty repository only while main has
 * never been seen there: once it has, its absence (the repository folder moved away, the ref file deleted) is a
 * read fault, never emptiness, which would serve no projects and take writes onto a new, unrelated history.
 */
export async function readMainHead(gitdir: string, seen: string | null): Promise<string | null> {
  const head = await readRef(gitdir, MAIN_REF);
  if (head !== null) return head;
  if (!existsSync(join(gitdir, 'objects'))) throw new StorageFaultError('read', 'the repository folder is gone');
  if (seen !== null) throw new StorageFaultError('read', 'main is gone from the repository');
  return null;
}
