import type { FlagFile, RepositoryState } from '@flagops/core';
import type { FlagCatalog } from './find-refs.js';

const FLAG_FILE = /^projects\/([^/]+)\/flags\/([^/]+)\.ya?ml$/;

/**
 * The flags of a repository (of one project when `project` is given) that a scan looks for, and their files.
 * A flag file with issues is left out of the state; its key is still a flag the repository has (taken from the
 * file name), so references to it are reported and calls with it are not unknown.
 */
export function flagCatalog(
  state: RepositoryState,
  paths: readonly string[],
  project: string | undefined,
): FlagCatalog & { files: FlagFile[] } {
  const files: FlagFile[] = [];
  for (const [slug, projectState] of state.projects) {
    if (project !== undefined && slug !== project) continue;
    for (const flag of projectState.flags.values()) files.push(flag.meta);
  }
  const listed = new Set(files.filter((f) => f.archivedAt === null).map((f) => f.key));
  const known = new Set(files.map((f) => f.key));
  for (const path of paths) {
    const m = FLAG_FILE.exec(path);
    if (!m || (project !== undefined && m[1] !== project) || known.has(m[2])) continue;
    listed.add(m[2]);
    known.add(m[2]);
  }
  return { listed: [...listed], known, files };
}
