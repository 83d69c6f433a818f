import { InvalidInputError, NotFoundError } from '../../errors/kinds.js';
import { parseTagTarget } from './git-objects.js';
import { ObjectNotFoundError, type ObjectStore } from './object-store.js';
import { readRef } from './refs.js';

const FULL_OID = /^[0-9a-f]{40}$/;
const SHORT_OID = /^[0-9a-f]{4,39}$/;
const REVISION = /^(.+?)((?:[~^]\d*)*)$/;

/**
 * Resolves what `git rev-parse <rev>^{commit}` would: `HEAD`, a branch, a tag (annotated ones peeled),
 * a full or abbreviated commit id, each optionally followed by `~n` / `^n` steps.
 */
export async function resolveRevision(gitdir: string, objects: ObjectStore, rev: string): Promise<string> {
  const m = REVISION.exec(rev.trim());
  if (!m) throw new NotFoundError(`revision ${JSON.stringify(rev)}`);
  let oid = await resolveBase(gitdir, objects, m[1]);
  if (oid === null) throw new NotFoundError(`revision ${JSON.stringify(rev)}`);
  oid = await peelToCommit(objects, oid, rev);
  for (const step of m[2].match(/[~^]\d*/g) ?? []) {
    const n = step.length > 1 ? Number(step.slice(1)) : 1;
    const commit = await objects.readCommit(oid);
    if (step[0] === '^') {
      if (n === 0) continue;
      oid = commit.parents[n - 1];
      if (oid === undefined) throw new NotFoundError(`revision ${JSON.stringify(rev)}`);
    } else {
      let cursor: string | undefined = oid;
      for (let i = 0; i < n && cursor !== undefined; i++) cursor = (await objects.readCommit(cursor)).parents[0];
      if (cursor === undefined) throw new NotFoundError(`revision ${JSON.stringify(rev)}`);
      oid = cursor;
    }
  }
  return oid;
}

async function resolveBase(gitdir: string, objects: ObjectStore, name: string): Promise<string | null> {
  if (FULL_OID.test(name)) return name;
  // The lookup order of git's `rev-parse`: the name itself, refs/, tags, branches, remotes.
  if (!name.includes('..') && !name.startsWith('/')) {
    for (const ref of [
      name,
      `refs/${name}`,
      `refs/tags/${name}`,
      `refs/heads/${name}`,
      `refs/remotes/${name}`,
      `refs/remotes/${name}/HEAD`,
    ]) {
      if (ref !== 'HEAD' && !ref.startsWith('refs/')) continue;
      const oid = await readRef(gitdir, ref);
      if (oid !== null) return oid;
    }
  }
  if (SHORT_OID.test(name)) {
    const found = await objects.expandOid(name);
    if (found && 'ambiguous' in found) throw new InvalidInputError(`${name} is ambiguous: ${found.ambiguous.join(', ')}`, 'revision');
    if (found) return found.oid;
  }
  return null;
}

async function peelToCommit(objects: ObjectStore, oid: string, rev: string): Promise<string> {
  for (let depth = 0; depth < 10; depth++) {
    let object: Awaited<ReturnType<ObjectStore['read']>>;
    try {
      object = await objects.read(oid);
    } catch (err) {
      if (err instanceof ObjectNotFoundError) throw new NotFoundError(`revision ${JSON.stringify(rev)}`);
      throw err;
    }
    if (object.type === 'commit') return oid;
    if (object.type !== 'tag') break;
    oid = parseTagTarget(object.content).object;
  }
  throw new NotFoundError(`commit for revision ${JSON.stringify(rev)}`);
}
