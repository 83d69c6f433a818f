import { ENVIRONMENTS, type EnvironmentName } from '../model/environments.js';
import type { EnvironmentConfig, FlagFile, FlagState, KillsFile, ProjectFile, ProjectState, RepositoryState } from '../model/types.js';
import { escapePointerSegment } from '../validation/error-messages.js';
import type { ValidationIssue } from '../validation/issue.js';
import { configValueKindIssues } from '../validation/value-kind.js';
import { classifyPath, layout } from './layout.js';
import type { ParsedFile } from './parsed-file.js';

/**
 * One file of a commit. Pass every file of the tree: `file` undefined means it is there but failed to parse,
 * so what it belongs to is left out rather than looking absent (a broken kills.yaml must not un-kill flags).
 */
export interface RepositoryEntry {
  path: string;
  file?: ParsedFile;
}

/** A file slot: `value` undefined when the file is present but invalid (already reported by the parser). */
interface Slot<T> {
  path: string;
  value: T | undefined;
}

interface ProjectBucket {
  project?: Slot<ProjectFile>;
  flags: Map<string, Slot<FlagFile>>;
  /** Per flag key, one slot per environment in ENVIRONMENTS order. */
  configs: Map<string, Array<Slot<EnvironmentConfig> | undefined>>;
  kills: Array<Slot<KillsFile> | undefined>;
}

const ENV_INDEX: Readonly<Record<EnvironmentName, number>> = { dev: 0, staging: 1, prod: 2 };

function bucketOf(buckets: Map<string, ProjectBucket>, slug: string): ProjectBucket {
  let bucket = buckets.get(slug);
  if (!bucket) {
    bucket = { flags: new Map(), configs: new Map(), kills: [undefined, undefined, undefined] };
    buckets.set(slug, bucket);
  }
  return bucket;
}

function sortFiles(entries: Iterable<RepositoryEntry>, issues: ValidationIssue[]): Map<string, ProjectBucket> {
  const buckets = new Map<string, ProjectBucket>();
  for (const { path, file } of entries) {
    const where = classifyPath(path);
    if (where.kind === 'other') continue;
    if (file && file.kind !== where.kind) {
      issues.push({ file: path, message: `holds a ${file.kind} file, but its path is that of a ${where.kind} file` });
      continue;
    }
    const bucket = bucketOf(buckets, where.project);
    switch (where.kind) {
      case 'project':
        bucket.project = { path, value: file?.value as ProjectFile | undefined };
        break;
      case 'flag':
        bucket.flags.set(where.flag, { path, value: file?.value as FlagFile | undefined });
        break;
      case 'config': {
        let slots = bucket.configs.get(where.flag);
        if (!slots) {
          slots = [undefined, undefined, undefined];
          bucket.configs.set(where.flag, slots);
        }
        slots[ENV_INDEX[where.environment]] = { path, value: file?.value as EnvironmentConfig | undefined };
        break;
      }
      case 'kills':
        bucket.kills[ENV_INDEX[where.environment]] = { path, value: file?.value as KillsFile | undefined };
        break;
    }
  }
  return buckets;
}

/** Ids appear in API paths without a project (`/flags/:id`), so they are unique across the organisation. */
interface IdRegistry {
  projects: Map<string, string>;
  flags: Map<string, string>;
}

function assembleFlag(
  slug: string,
  key: string,
  slot: Slot<FlagFile>,
  configs: Array<Slot<EnvironmentConfig> | undefined> | undefined,
  ids: IdRegistry,
  issues: ValidationIssue[],
): FlagState | undefined {
  const meta = slot.value;
  if (!meta) return undefined;
  let ok = true;
  if (meta.key !== key) {
    issues.push({ file: slot.path, path: '/key', message: `must equal the file name "${key}" (found "${meta.key}")` });
    ok = false;
  }
  const sameId = ids.flags.get(meta.id);
  if (sameId !== undefined) {
    issues.push({ file: slot.path, path: '/id', message: `id "${meta.id}" is already used by ${sameId}; flag ids must be unique` });
    ok = false;
  } else {
    ids.flags.set(meta.id, slot.path);
  }
  const environments = {} as Record<EnvironmentName, EnvironmentConfig>;
  for (let i = 0; i < ENVIRONMENTS.length; i++) {
    const env = ENVIRONMENTS[i];
    const config = configs?.[i];
    if (!config) {
      issues.push({ file: slot.path, message: `has no config in ${env} (expected ${layout.configFile(slug, env, key)})` });
      ok = false;
    } else if (!config.value) {
      ok = false;
    } else {
      const kindIssues = configValueKindIssues(meta.kind, config.value, config.path);
      if (kindIssues.length > 0) {
        issues.push(...kindIssues);
        ok = false;
      }
      environments[env] = config.value;
    }
  }
  return ok ? { meta, environments } : undefined;
}

function assembleProject(slug: string, bucket: ProjectBucket, ids: IdRegistry, issues: ValidationIssue[]): ProjectState | undefined {
  const project = bucket.project?.value;
  let ok = project !== undefined;
  if (!bucket.project) {
    issues.push({ file: layout.projectFile(slug), message: `is missing: the folder projects/${slug} needs one; its ${bucket.flags.size} flag(s) are not served` });
  } else if (project && project.slug !== slug) {
    issues.push({ file: bucket.project.path, path: '/slug', message: `must equal the folder name "${slug}" (found "${project.slug}")` });
    ok = false;
  } else if (project) {
    const sameId = ids.projects.get(project.id);
    if (sameId !== undefined) {
      issues.push({ file: bucket.project.path, path: '/id', message: `id "${project.id}" is already used by ${sameId}; project ids must be unique` });
      ok = false;
    } else {
      ids.projects.set(project.id, bucket.project.path);
    }
  }
  for (const kills of bucket.kills) {
    if (kills && !kills.value) {
      issues.push({ file: kills.path, message: `project "${slug}" is not served while this file is invalid, so that no killed flag comes back on` });
      ok = false;
    }
  }
  // Orphan configs are reported even when the project is left out: they need fixing either way.
  for (const [key, slots] of bucket.configs) {
    if (bucket.flags.has(key)) continue;
    for (const slot of slots) if (slot) issues.push({ file: slot.path, message: `has no flag file (expected ${layout.flagFile(slug, key)})` });
  }
  if (!ok || !project) return undefined;

  const flags = new Map<string, FlagState>();
  const byLowerCase = new Map<string, string>();
  for (const key of [...bucket.flags.keys()].sort()) {
    const slot = bucket.flags.get(key)!;
    const lower = key.toLowerCase();
    const twin = byLowerCase.get(lower);
    if (twin !== undefined) {
      issues.push({ file: slot.path, message: `differs from flag "${twin}" only in letter case; the two files collide on case-insensitive file systems` });
      continue;
    }
    byLowerCase.set(lower, key);
    const flag = assembleFlag(slug, key, slot, bucket.configs.get(key), ids, issues);
    if (flag) flags.set(key, flag);
  }

  const kills = {} as Record<EnvironmentName, KillsFile>;
  for (let i = 0; i < ENVIRONMENTS.length; i++) {
    const slot = bucket.kills[i];
    const served: KillsFile = { kills: {} };
    for (const [key, kill] of Object.entries(slot?.value?.kills ?? {})) {
      if (flags.has(key)) served.kills[key] = kill;
      else if (!bucket.flags.has(key)) {
        issues.push({ file: slot!.path, path: `/kills/${escapePointerSegment(key)}`, message: `names flag "${key}", which has no flag file in project "${slug}"` });
      }
      // A kill of a flag left out for its own issues is simply not served: the flag is not either.
    }
    kills[ENVIRONMENTS[i]] = served;
  }
  return { project, flags, kills };
}

/**
 * Builds the typed state of one commit from its parsed files, with the cross-file checks: every config has
 * its flag file, every flag has a config in dev, staging and prod, a flag's key is its file name, a project's
 * slug is its folder name, ids are unique, kills name existing flags, values match the flag's kind.
 *
 * A flag with any issue is left out of the state, and a project whose project.yaml or a kills.yaml is
 * missing or invalid is left out whole; the issues say why. Everything else is kept, so callers may keep
 * serving it. Linear in the number of files (plus sorting flag keys, for a stable order).
 */
export function assembleState(entries: Iterable<RepositoryEntry>, commit: string | null): { state: RepositoryState; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const buckets = sortFiles(entries, issues);
  const ids: IdRegistry = { projects: new Map(), flags: new Map() };
  const projects = new Map<string, ProjectState>();
  for (const slug of [...buckets.keys()].sort()) {
    const project = assembleProject(slug, buckets.get(slug)!, ids, issues);
    if (project) projects.set(slug, project);
  }
  return { state: { commit, projects }, issues };
}
