import {
  ENVIRONMENTS,
  type EnvironmentConfig,
  type EnvironmentName,
  type FlagFile,
  type FlagState,
  type KillsFile,
  type ProjectFile,
} from '@flagops/core';
import { escapePointerSegment } from '../validation/error-messages.js';
import type { ValidationIssue } from '../validation/issue.js';
import { configValueKindIssues } from '../validation/value-kind.js';
import { layout } from './layout.js';

// The cross-file checks of one project, shared by assembleState (a whole commit at once) and
// ProjectAssembler (one project kept up to date file by file), so that both say exactly the same.

/** A file slot: `value` undefined when the file is present but invalid (already reported by the parser). */
export interface Slot<T> {
  path: string;
  value: T | undefined;
}

const NO_ISSUES: readonly ValidationIssue[] = Object.freeze([]);

/** Slots per environment are arrays in ENVIRONMENTS order. */
export const ENV_INDEX: Readonly<Record<EnvironmentName, number>> = { dev: 0, staging: 1, prod: 2 };

/** What a flag's own files say, before the checks that involve other flags (unique ids, letter case). */
export interface FlagCheck {
  /** Undefined when the flag file is invalid: its parse issues say why, and nothing more is reported. */
  meta: FlagFile | undefined;
  /** The flag file's key is not its file name. */
  keyIssue?: ValidationIssue;
  /** Missing configs and values of the wrong kind, in environment order. */
  configIssues: readonly ValidationIssue[];
  /** The flag as served, when its own files have no issue (it may still lose its id to another flag). */
  state?: FlagState;
}

export function checkFlagFiles(
  slug: string,
  key: string,
  slot: Slot<FlagFile>,
  configs: ReadonlyArray<Slot<EnvironmentConfig> | undefined> | undefined,
): FlagCheck {
  const meta = slot.value;
  if (!meta) return { meta, configIssues: NO_ISSUES };
  const keyIssue: ValidationIssue | undefined =
    meta.key === key ? undefined : { file: slot.path, path: '/key', message: `must equal the file name "${key}" (found "${meta.key}")` };
  let ok = keyIssue === undefined;
  const configIssues: ValidationIssue[] = [];
  const environments = {} as Record<EnvironmentName, EnvironmentConfig>;
  for (let i = 0; i < ENVIRONMENTS.length; i++) {
    const env = ENVIRONMENTS[i];
    const config = configs?.[i];
    if (!config) {
      configIssues.push({ file: slot.path, message: `has no config in ${env} (expected ${layout.configFile(slug, env, key)})` });
      ok = false;
    } else if (!config.value) {
      ok = false;
    } else {
      const kindIssues = configValueKindIssues(meta.kind, config.value, config.path);
      if (kindIssues.length > 0) {
        configIssues.push(...kindIssues);
        ok = false;
      }
      environments[env] = config.value;
    }
  }
  // The empty array is not kept: ProjectAssembler holds a check per flag, nearly all without issues.
  return {
    meta,
    keyIssue,
    configIssues: configIssues.length > 0 ? configIssues : NO_ISSUES,
    state: ok ? { meta, environments } : undefined,
  };
}

/**
 * Issues about files clashing with each other (one id used twice, keys that differ only in letter case, a kill
 * of a flag that has no flag file), as opposed to a file invalid on its own. A clash does not make a flag's
 * or project's own files invalid, so it holds nothing back (held-units.ts); the loser is simply left out.
 */
const clashes = new WeakSet<ValidationIssue>();

export function isClash(issue: ValidationIssue): boolean {
  return clashes.has(issue);
}

function clash(issue: ValidationIssue): ValidationIssue {
  clashes.add(issue);
  return issue;
}

export function duplicateIdIssue(kind: 'flag' | 'project', path: string, id: string, holder: string): ValidationIssue {
  return clash({ file: path, path: '/id', message: `id "${id}" is already used by ${holder}; ${kind} ids must be unique` });
}

export function caseCollisionIssue(path: string, twin: string): ValidationIssue {
  return clash({
    file: path,
    message: `differs from flag "${twin}" only in letter case; the two files collide on case-insensitive file systems`,
  });
}

/** Configs of a key that has no flag file: reported even when the project is left out, as they need fixing. */
export function orphanIssues(
  slug: string,
  key: string,
  slots: ReadonlyArray<Slot<EnvironmentConfig> | undefined>,
  issues: ValidationIssue[],
): void {
  for (const slot of slots)
    if (slot) issues.push({ file: slot.path, message: `has no flag file (expected ${layout.flagFile(slug, key)})` });
}

/**
 * project.yaml and the kills files: whether the project can be served, with the issues that say why not.
 * `claimId` registers the project's id across projects and returns the path already holding it, if any.
 */
export function checkProjectFiles(
  slug: string,
  project: Slot<ProjectFile> | undefined,
  kills: ReadonlyArray<Slot<KillsFile> | undefined>,
  claimId: ((id: string, path: string) => string | undefined) | undefined,
  issues: ValidationIssue[],
): boolean {
  let ok = project?.value !== undefined;
  if (!project) {
    issues.push({ file: layout.projectFile(slug), message: `is missing: the folder projects/${slug} needs one` });
  } else if (project.value && project.value.slug !== slug) {
    issues.push({ file: project.path, path: '/slug', message: `must equal the folder name "${slug}" (found "${project.value.slug}")` });
    ok = false;
  } else if (project.value && claimId) {
    const holder = claimId(project.value.id, project.path);
    if (holder !== undefined) {
      issues.push(duplicateIdIssue('project', project.path, project.value.id, holder));
      ok = false;
    }
  }
  // An invalid kills file is reported by the parser; the project is left out rather than un-kill its flags.
  if (kills.some((slot) => slot && !slot.value)) ok = false;
  return ok;
}

/** The kills served per environment: those of served flags. A kill naming no flag file is an issue. */
export function serveKills(
  slug: string,
  slots: ReadonlyArray<Slot<KillsFile> | undefined>,
  flags: ReadonlyMap<string, FlagState>,
  hasFlagFile: (key: string) => boolean,
  issues: ValidationIssue[],
): Record<EnvironmentName, KillsFile> {
  const kills = {} as Record<EnvironmentName, KillsFile>;
  for (let i = 0; i < ENVIRONMENTS.length; i++) {
    const slot = slots[i];
    const served: KillsFile = { kills: {} };
    for (const [key, kill] of Object.entries(slot?.value?.kills ?? {})) {
      if (flags.has(key)) served.kills[key] = kill;
      else if (!hasFlagFile(key)) {
        issues.push(
          clash({
            file: slot!.path,
            path: `/kills/${escapePointerSegment(key)}`,
            message: `names flag "${key}", which has no flag file in project "${slug}"`,
          }),
        );
      }
      // A kill of a flag left out for its own issues is simply not served: the flag is not either.
    }
    kills[ENVIRONMENTS[i]] = served;
  }
  return kills;
}
