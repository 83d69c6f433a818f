import {
  ENVIRONMENTS,
  type EnvironmentConfig,
  type EnvironmentName,
  type FlagFile,
  type FlagState,
  type KillsFile,
  type ProjectFile,
  type SegmentFile,
} from '@flagops/core';
import type { ValidationIssue } from '../validation/issue.js';
import { classifyPath } from './layout.js';
import { checkFlagFiles, checkProjectFiles, isClash, type Slot } from './project-checks.js';

// What an invalid file holds back. Every file of the layout belongs to one unit: a flag (its definition and
// its config in each environment) or a project (project.yaml and the kills file of each environment). While a
// unit's own files are invalid it keeps serving its last valid state; nothing else waits for it.

export type HeldUnit = { kind: 'project'; project: string } | { kind: 'flag'; project: string; flag: string };

/** The unit a repository path belongs to; undefined for files outside the layout (they hold back nothing). */
export function unitOfPath(path: string): HeldUnit | undefined {
  const where = classifyPath(path);
  switch (where.kind) {
    // A segment acts on every flag of its project: it belongs to the project.
    case 'project':
    case 'kills':
    case 'segment':
      return { kind: 'project', project: where.project };
    case 'flag':
    case 'config':
      return { kind: 'flag', project: where.project, flag: where.flag };
    case 'other':
      return undefined;
  }
}

/**
 * Whether an issue makes the unit of its file invalid on its own. A clash between flags (a flag id used twice,
 * keys differing only in letter case, a kill of a flag without a flag file) does not: it holds nothing back. A
 * project that lost its id to another does: it keeps its last valid state, so its SDK keys keep serving it.
 */
export function holdsBack(issue: ValidationIssue): boolean {
  return !isClash(issue);
}

/** `<slug>/<key>`: how held flags are keyed (slugs contain no `/`). */
export const flagUnitKey = (slug: string, key: string): string => `${slug}/${key}`;

/** An invalid file as API responses, /healthz and the dashboard show it. */
export interface InvalidFile {
  /** Repository path (`projects/shop/environments/prod/checkout.yaml`). */
  file: string;
  /** 1-based line, or null when the problem is not at a line (a missing file). */
  line: number | null;
  message: string;
}

export function invalidFile(issue: ValidationIssue): InvalidFile {
  return {
    file: issue.file ?? '',
    line: issue.line ?? null,
    message: issue.path ? `${issue.path}: ${issue.message}` : issue.message,
  };
}

/** The files of one flag unit as found in a commit: `value` undefined where a file is present but invalid. */
export interface FlagFiles {
  flag: Slot<FlagFile> | undefined;
  /** In ENVIRONMENTS order. */
  configs: ReadonlyArray<Slot<EnvironmentConfig> | undefined>;
}

/** The flag as served from these files alone, or undefined when any of them is missing or invalid. */
export function validFlag(slug: string, key: string, files: FlagFiles): FlagState | undefined {
  if (!files.flag?.value || files.configs.some((slot) => !slot?.value)) return undefined;
  return checkFlagFiles(slug, key, files.flag, files.configs).state;
}

/** The files of one project unit; a kills slot is undefined when the file is absent (no kills). */
export interface ProjectFiles {
  project: Slot<ProjectFile> | undefined;
  kills: ReadonlyArray<Slot<KillsFile> | undefined>;
  /** Every segment file of the project. */
  segments: ReadonlyArray<Slot<SegmentFile>>;
}

const NO_KILLS: KillsFile = Object.freeze({ kills: Object.freeze({}) }) as KillsFile;

/** Each environment's kills as these files say, undefined where the kills file is invalid. */
export function validKills(files: ProjectFiles): Record<EnvironmentName, KillsFile | undefined> {
  const out = {} as Record<EnvironmentName, KillsFile | undefined>;
  ENVIRONMENTS.forEach((env, i) => {
    const slot = files.kills[i];
    out[env] = slot ? slot.value : NO_KILLS;
  });
  return out;
}

/** Whether the project's own files are valid: project.yaml present, valid and naming its folder; kills files and segments valid. */
export function projectFilesValid(slug: string, files: ProjectFiles): boolean {
  return checkProjectFiles(slug, files.project, files.kills, undefined, [], files.segments) && files.project?.value !== undefined;
}

/** A kills file without the kills of flags that have no flag file (which would make it invalid to write). */
export function killsOfFlags(kills: KillsFile, hasFlag: (key: string) => boolean): KillsFile {
  const kept: KillsFile = { kills: {} };
  for (const [key, entry] of Object.entries(kills.kills)) if (hasFlag(key)) kept.kills[key] = entry;
  return kept;
}

export const emptyKills = (): KillsFile => NO_KILLS;

export interface IssuesByUnit {
  projectIssues: Map<string, ValidationIssue[]>;
  flagIssues: Map<string, Map<string, ValidationIssue[]>>;
}

// Issue lists are shared per commit: grouped once.
const grouped = new WeakMap<readonly ValidationIssue[], IssuesByUnit>();

/** Issues by the unit their file belongs to: per project slug, and per project slug and flag key. */
export function issuesByUnit(issues: readonly ValidationIssue[]): IssuesByUnit {
  const known = grouped.get(issues);
  if (known) return known;
  const projectIssues = new Map<string, ValidationIssue[]>();
  const flagIssues = new Map<string, Map<string, ValidationIssue[]>>();
  for (const issue of issues) {
    const unit = issue.file === undefined ? undefined : unitOfPath(issue.file);
    if (unit?.kind === 'project') {
      const list = projectIssues.get(unit.project) ?? [];
      list.push(issue);
      projectIssues.set(unit.project, list);
    } else if (unit?.kind === 'flag') {
      let byKey = flagIssues.get(unit.project);
      if (!byKey) {
        byKey = new Map();
        flagIssues.set(unit.project, byKey);
      }
      const list = byKey.get(unit.flag) ?? [];
      list.push(issue);
      byKey.set(unit.flag, list);
    }
  }
  const result = { projectIssues, flagIssues };
  grouped.set(issues, result);
  return result;
}
