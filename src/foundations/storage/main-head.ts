import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { StorageFaultError } from '../errors/kinds.js';
import { isRepository } from './git/init-repository.js';
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

/**
 * The repository of an organisation that had one is missing (`folder`), or holds objects but no `main`
 * (`main`): it was lost, not never made, and a new empty one would hide its history. The message names no path
 * (it reaches API callers); `gitdir` is for the operator.
 */
export class LostRepositoryError extends StorageFaultError {
  constructor(
    readonly gitdir: string,
    readonly missing: 'folder' | 'main',
  ) {
    super('read', missing === 'folder' ? 'the repository folder is gone' : 'main is gone from the repository');
  }
}

/** Throws LostRepositoryError unless `gitdir` is a repository whose `main` exists or which holds no object yet. */
export async function assertRepositoryKept(gitdir: string): Promise<void> {
  if (!(await isRepository(gitdir))) throw new LostRepositoryError(gitdir, 'folder');
  if ((await readRef(gitdir, MAIN_REF)) === null && holdsObjects(gitdir)) throw new LostRepositoryError(gitdir, 'main');
}

/** Whether any object is stored, loose (`objects/<2 hex>/…`) or packed (`objects/pack/*.pack`). */
function holdsObjects(gitdir: string): boolean {
  const entries = (dir: string) => {
    try {
      return readdirSync(join(gitdir, 'objects', dir));
    } catch {
      return [];
    }
  };
  if (entries('pack').some((name) => name.endsWith('.pack'))) return true;
  return entries('')
    .filter((name) => /^[0-9a-f]{2}$/.test(name))
    .some((dir) => entries(dir).length > 0);
}
