import type {
  EnvironmentConfig,
  FlagFile,
  FlagState,
  KillsFile,
  ProjectFile,
  ProjectState,
  RepositoryState,
  SegmentFile,
} from '@flagops/core';
import type { ValidationIssue } from '../validation/issue.js';
import { classifyPath, layout } from './layout.js';
import type { ParsedFile } from './parsed-file.js';
import {
  caseCollisionIssue,
  checkFlagFiles,
  checkProjectFiles,
  checkReferences,
  duplicateIdIssue,
  ENV_INDEX,
  orphanIssues,
  type Slot,
  segmentKeys,
  servedSegments,
  serveKills,
} from './project-checks.js';

/**
 * One file of a commit. Pass every file of the tree: `file` undefined means it is there but failed to parse,
 * so what it belongs to is left out rather than looking absent (a broken kills.yaml must not un-kill flags).
 */
export interface RepositoryEntry {
  path: string;
  file?: ParsedFile;
}

interface ProjectBucket {
  project?: Slot<ProjectFile>;
  flags: Map<string, Slot<FlagFile>>;
  /** Per flag key, one slot per environment in ENVIRONMENTS order. */
  configs: Map<string, Array<Slot<EnvironmentConfig> | undefined>>;
  kills: Array<Slot<KillsFile> | undefined>;
  segments: Map<string, Slot<SegmentFile>>;
}

function bucketOf(buckets: Map<string, ProjectBucket>, slug: string): ProjectBucket {
  let bucket = buckets.get(slug);
  if (!bucket) {
    bucket = { flags: new Map(), configs: new Map(), kills: [undefined, undefined, undefined], segments: new Map() };
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
      case 'segment':
        bucket.segments.set(where.segment, { path, value: file?.value as SegmentFile | undefined });
        break;
    }
  }
  return buckets;
}

const NO_INCUMBENTS: ReadonlySet<string> = new Set();

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
  const check = checkFlagFiles(slug, key, slot, configs);
  if (!check.meta) return undefined;
  if (check.keyIssue) issues.push(check.keyIssue);
  // An incumbent's id is claimed for it before any flag is assembled.
  const holder = ids.flags.get(check.meta.id);
  const sameId = holder === slot.path ? undefined : holder;
  if (sameId !== undefined) issues.push(duplicateIdIssue('flag', slot.path, check.meta.id, sameId));
  else ids.flags.set(check.meta.id, slot.path);
  issues.push(...check.configIssues);
  return sameId === undefined ? check.state : undefined;
}

/**
 * Per letter-case-folded key, the key that keeps it: an incumbent if one is among them, else the first in
 * key order.
 */
function caseWinners(slug: string, bucket: ProjectBucket, incumbents: ReadonlySet<string>): Map<string, string> {
  const winners = new Map<string, string>();
  for (const key of [...bucket.flags.keys()].sort()) {
    const lower = key.toLowerCase();
    const current = winners.get(lower);
    if (current === undefined) winners.set(lower, key);
    else if (incumbents.has(layout.flagFile(slug, key)) && !incumbents.has(layout.flagFile(slug, current))) winners.set(lower, key);
  }
  return winners;
}

function assembleProject(
  slug: string,
  bucket: ProjectBucket,
  ids: IdRegistry,
  issues: ValidationIssue[],
  incumbents: ReadonlySet<string>,
): ProjectState | undefined {
  // An incumbent's id is claimed for it before any project is assembled.
  const claimId = (id: string, path: string) => {
    const holder = ids.projects.get(id);
    if (holder === undefined) ids.projects.set(id, path);
    return holder === path ? undefined : holder;
  };
  const ok = checkProjectFiles(slug, bucket.project, bucket.kills, claimId, issues, bucket.segments.values());
  for (const [key, slots] of bucket.configs) {
    if (!bucket.flags.has(key)) orphanIssues(slug, key, slots, issues);
  }
  const project = bucket.project?.value;
  const served = ok && project !== undefined;
  // A project left out still has its flags checked, so that one run lists every issue of the tree. Not served
  // from these files, its flags claim no id from the projects after it (a copy of the registry).
  const flagIds = served ? ids : { projects: ids.projects, flags: new Map(ids.flags) };

  const flags = new Map<string, FlagState>();
  const winners = caseWinners(slug, bucket, incumbents);
  for (const key of [...bucket.flags.keys()].sort()) {
    const slot = bucket.flags.get(key)!;
    const twin = winners.get(key.toLowerCase())!;
    if (twin !== key) {
      issues.push(caseCollisionIssue(slot.path, twin));
      continue;
    }
    const flag = assembleFlag(slug, key, slot, bucket.configs.get(key), flagIds, issues);
    if (flag) flags.set(key, flag);
  }
  const hasFlagFile = (key: string) => bucket.flags.has(key);
  const checked = checkReferences(slug, flags, hasFlagFile, segmentKeys(bucket.segments.values()), issues) as Map<string, FlagState>;
  const kills = serveKills(slug, bucket.kills, checked, hasFlagFile, issues);
  if (!served) return undefined;
  return { project, flags: checked, kills, segments: servedSegments(bucket.segments.values()) };
}

/**
 * Builds the typed state of one commit from its parsed files, with the cross-file checks: every config has
 * its flag file, every flag has a config in dev, staging and prod, a flag's key is its file name, a project's
 * slug is its folder name, ids are unique, kills name existing flags, values match the flag's kind, variants
 * add up, segments and prerequisites named exist, prerequisites form no cycle.
 *
 * A flag with any issue is left out of the state, and a project whose project.yaml or a kills.yaml is
 * missing or invalid, or with an invalid segment, is left out whole; the issues say why, those of its flags
 * included. Everything else is kept, so callers may keep serving it. Linear in the number of files (plus
 * sorting flag keys, for a stable order).
 *
 * Of flags clashing over an id or a letter-case-folded key, one in `incumbents` (flag file paths: those that
 * held it before this commit) keeps it; otherwise the first by project, then by key. The others are reported.
 * The same for projects clashing over an id, with their project.yaml paths in `incumbents`; a project that
 * lost its id is left out, and its issue holds it back (its last valid state is served).
 */
export function assembleState(
  entries: Iterable<RepositoryEntry>,
  commit: string | null,
  incumbents: ReadonlySet<string> = NO_INCUMBENTS,
): { state: RepositoryState; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const buckets = sortFiles(entries, issues);
  const ids: IdRegistry = { projects: new Map(), flags: new Map() };
  for (const path of [...incumbents].sort()) {
    const where = classifyPath(path);
    if (where.kind === 'project') {
      const id = buckets.get(where.project)?.project?.value?.id;
      if (id !== undefined && !ids.projects.has(id)) ids.projects.set(id, path);
    }
    if (where.kind !== 'flag') continue;
    const bucket = buckets.get(where.project);
    const id = bucket?.flags.get(where.flag)?.value?.id;
    // Only a flag that keeps its key can keep its id.
    if (!bucket || id === undefined || ids.flags.has(id)) continue;
    if (caseWinners(where.project, bucket, incumbents).get(where.flag.toLowerCase()) === where.flag) ids.flags.set(id, path);
  }
  const projects = new Map<string, ProjectState>();
  for (const slug of [...buckets.keys()].sort()) {
    const project = assembleProject(slug, buckets.get(slug)!, ids, issues, incumbents);
    if (project) projects.set(slug, project);
  }
  return { state: { commit, projects }, issues };
}
