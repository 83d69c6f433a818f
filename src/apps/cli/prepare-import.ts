import { ENVIRONMENTS, type RepositoryState } from '@flagops/core';
import { classifyPath, layout } from '../../foundations/repository/layout.js';
import { parseRepositoryFile } from '../../foundations/repository/parse-file.js';
import type { FileChange, FlagRepository } from '../../foundations/storage/index.js';
import { changedFiles, type ImportPlan, planProject } from './import-plan.js';
import type { DirectoryFile } from './read-directory.js';

/** Stops the import with a message for the operator; nothing was committed. */
export class ImportRefused extends Error {}

/** The part of a repository an import reads: main's tree and the state at a commit. */
export type ImportTarget = Pick<FlagRepository, 'treeOid' | 'readBlob' | 'readState'>;

export interface ImportRequest {
  org: string;
  /** How the directory was named on the command line, for messages. */
  dir: string;
  files: readonly DirectoryFile[];
  /** The directory as read, validated. */
  imported: RepositoryState;
  replace: boolean;
}

export interface PreparedImport {
  changes: FileChange[];
  plan: ImportPlan;
  /** The projects that exist and are replaced (their kills are kept). */
  replaced: string[];
}

/** The paths of a project the current state knows, kills files excluded, so that files the import lacks are deleted. */
function replacedPaths(state: RepositoryState, slug: string): string[] {
  const project = state.projects.get(slug);
  const paths = [layout.projectFile(slug)];
  for (const key of project?.flags.keys() ?? []) {
    paths.push(layout.flagFile(slug, key), ...ENVIRONMENTS.map((env) => layout.configFile(slug, env, key)));
  }
  for (const key of project?.segments?.keys() ?? []) paths.push(layout.segmentFile(slug, key));
  return paths;
}

/** The flags an existing project's kills.yaml files name, per environment, as committed at `head`. */
async function killedFlags(repo: ImportTarget, head: string, slug: string): Promise<Array<{ env: string; flag: string }>> {
  const killed: Array<{ env: string; flag: string }> = [];
  for (const env of ENVIRONMENTS) {
    const path = layout.killsFile(slug, env);
    const oid = await repo.treeOid(head, path);
    if (oid === null) continue;
    const { file } = parseRepositoryFile(path, await repo.readBlob(oid));
    // An unreadable kills.yaml is kept as it is; the store then refuses a commit whose kills name missing flags.
    if (file?.kind === 'kills') for (const flag of Object.keys(file.value.kills)) killed.push({ env, flag });
  }
  return killed;
}

/**
 * What importing the directory into `current` (main at `head`; `repo` null when the organisation has no
 * repository yet) writes, and its plan. Throws ImportRefused for what no option allows: replacing a project
 * without --replace, deleting a killed flag. Whether the plan needs --yes is the caller's to decide.
 */
export async function prepareImport(
  request: ImportRequest,
  repo: ImportTarget | null,
  current: RepositoryState,
  head: string | null,
): Promise<PreparedImport> {
  const { org, dir, files, imported, replace } = request;
  const changes = new Map<string, FileChange>();
  const replaced: string[] = [];
  const plan: ImportPlan = { org, head, repositoryExists: repo !== null, projects: [] };
  // Broken files of an imported project are not in `current`; the issues name them.
  const broken = repo === null || head === null ? [] : (await repo.readState(head)).issues.map((issue) => issue.file ?? '');
  const incoming = new Set(files.map((file) => file.path));
  // Per replaced project, the files main has that the import leaves as they are: those whose content it does not change.
  const kept = new Set<string>();
  for (const [slug, project] of imported.projects) {
    const exists = repo !== null && head !== null && (await repo.treeOid(head, layout.projectDir(slug))) !== null;
    if (!exists) {
      plan.projects.push(planProject(slug, undefined, project, false));
      continue;
    }
    if (!replace)
      throw new ImportRefused(`project ${slug} already exists in organisation ${org}; pass --replace to replace it (its kills are kept)`);
    replaced.push(slug);
    for (const { env, flag } of await killedFlags(repo, head, slug)) {
      if (!project.flags.has(flag)) {
        throw new ImportRefused(
          `flag ${flag} of project ${slug} is killed in ${env} and ${dir} does not have it; an import never lifts a kill: clear the kill first, or keep the flag`,
        );
      }
    }
    const inProject = (p: string) => p.startsWith(`${layout.projectDir(slug)}/`) && classifyPath(p).kind !== 'kills';
    const brokenHere = [...new Set(broken.filter(inProject))];
    const onMain = replacedPaths(current, slug);
    for (const path of [...onMain, ...brokenHere]) changes.set(path, { path, content: null });
    const projectPlan = planProject(slug, current.projects.get(slug), project, true, brokenHere, (path) => incoming.has(path));
    plan.projects.push(projectPlan);
    const changed = changedFiles(projectPlan);
    for (const path of onMain) if (!changed.has(path) && incoming.has(path)) kept.add(path);
  }
  for (const file of files) {
    const where = classifyPath(file.path);
    if (where.kind === 'kills' && replaced.includes(where.project)) continue; // an existing project keeps its kills
    if (kept.has(file.path)) {
      changes.delete(file.path);
      continue;
    }
    changes.set(file.path, { path: file.path, content: file.text });
  }
  return { changes: [...changes.values()], plan, replaced };
}
