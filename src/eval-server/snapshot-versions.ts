import { type EnvironmentName, ENVIRONMENTS } from '../model/index.js';
import { layout } from '../repository/layout.js';
import type { ServingRepository } from './serving-repository.js';

/**
 * Snapshot versions (contract §4): the version of (project, environment) at commit C is the height (first-parent
 * commit count) of the newest first-parent ancestor-or-self of C in which that environment's folder or the
 * project's flags folder changed. It depends on history alone, so every server reading the same commit
 * computes the same number; it grows with every change that touches the environment, kills included, and
 * stays put when another environment or project changes.
 */
export type VersionKey = `${string}/${EnvironmentName}`;

export const versionKey = (slug: string, env: EnvironmentName): VersionKey => `${slug}/${env}`;

type Fingerprints = Map<VersionKey, string>;

async function fingerprints(repo: ServingRepository, commit: string, keys: Iterable<VersionKey>): Promise<Fingerprints> {
  const out: Fingerprints = new Map();
  const bySlug = new Map<string, { project: string | null; flags: string | null }>();
  for (const key of keys) {
    const slash = key.lastIndexOf('/');
    const slug = key.slice(0, slash);
    const env = key.slice(slash + 1) as EnvironmentName;
    let dirs = bySlug.get(slug);
    if (!dirs) {
      const project = await repo.treeOid(commit, layout.projectDir(slug));
      dirs = { project, flags: project === null ? null : await repo.treeOid(commit, layout.flagsDir(slug)) };
      bySlug.set(slug, dirs);
    }
    const envTree = dirs.project === null ? null : await repo.treeOid(commit, layout.environmentDir(slug, env));
    out.set(key, `${dirs.flags}:${envTree}`);
  }
  return out;
}

/** Every (project, environment) key of the given project slugs. */
export function allVersionKeys(slugs: Iterable<string>): VersionKey[] {
  const keys: VersionKey[] = [];
  for (const slug of slugs) for (const env of ENVIRONMENTS) keys.push(versionKey(slug, env));
  return keys;
}

/**
 * The versions of `keys` at `head`. With `known` (the versions at an earlier commit on the same first-parent
 * chain) only the commits since it are read; otherwise the walk goes back until every key is resolved.
 */
export async function snapshotVersions(
  repo: ServingRepository,
  head: string,
  keys: readonly VersionKey[],
  known?: { commit: string; versions: ReadonlyMap<VersionKey, number> },
): Promise<Map<VersionKey, number>> {
  const result = new Map<VersionKey, number>();
  const pending = new Set(keys);
  let commit = head;
  let current = await fingerprints(repo, commit, pending);
  while (pending.size > 0) {
    if (known && commit === known.commit) {
      for (const key of pending) result.set(key, known.versions.get(key) ?? 0);
      break;
    }
    const parent = (await repo.readCommit(commit)).parents[0];
    if (parent === undefined) {
      const height = await repo.height(commit);
      for (const key of pending) result.set(key, current.get(key) === 'null:null' ? 0 : height);
      break;
    }
    const before = await fingerprints(repo, parent, pending);
    let height: number | undefined;
    for (const key of [...pending]) {
      if (current.get(key) !== before.get(key)) {
        height ??= await repo.height(commit);
        result.set(key, current.get(key) === 'null:null' ? 0 : height);
        pending.delete(key);
      }
    }
    commit = parent;
    current = before;
  }
  return result;
}
