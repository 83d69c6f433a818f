import { ENVIRONMENTS, type EnvironmentName, type JsonValue, type ProjectState } from '@flagops/core';
import { type ChangeItem, diffStates, type FlagChange } from '../../foundations/repository/diff-states.js';
import { jsonEqual } from '../../foundations/repository/json-equal.js';
import { layout } from '../../foundations/repository/layout.js';

/** What an import may do only with --yes: it removes something, or changes what a project is. */
export type ConfirmItem =
  | { type: 'flag_deleted'; flag: string }
  | { type: 'flag_archived'; flag: string }
  /** API paths name a flag by its id: a new id is, to them, a deleted flag and a new one. */
  | { type: 'flag_id_changed'; flag: string; before: string; after: string }
  | { type: 'segment_deleted'; segment: string }
  /** A field of project.yaml: id, name, requireApproval, budgets. */
  | { type: 'setting_changed'; field: string; before: JsonValue | undefined; after: JsonValue | undefined }
  /** A file of the project that has issues, so what it held cannot be compared: deleted, or replaced by the directory's. */
  | { type: 'file_with_issues'; path: string; deleted: boolean };

export interface KilledFlag {
  environment: EnvironmentName;
  flag: string;
}

export interface ProjectPlan {
  slug: string;
  /** `create`: new in the organisation; `replace`: it exists, and --replace makes it as in the directory. */
  action: 'create' | 'replace';
  /** What needs --yes, in a stable order: settings, then segments and flags by name, then files with issues. */
  confirm: ConfirmItem[];
  /** The other changes of a replaced project, as `flagops diff` words them; none for a new project. */
  changes: FlagChange[];
  /** A new project's flags, segments and settings (its whole project.yaml but slug), for its summary. */
  flags: string[];
  segments: string[];
  settings: Record<string, JsonValue>;
  /** A replaced project's kills, which stay; a new project's, which arrive from the directory. */
  kills: KilledFlag[];
  /** A replaced project: the directory's kills.yaml files differ from the project's and are not applied. */
  killsIgnored: boolean;
}

export interface ImportPlan {
  org: string;
  /** main's head the plan was made against; null when the organisation has no commit yet. */
  head: string | null;
  /** Whether the organisation's repository exists (a dry run does not create it). */
  repositoryExists: boolean;
  projects: ProjectPlan[];
}

/** Settings first in the order a reader knows them, then any other field by name. */
const SETTING_ORDER = ['id', 'name', 'requireApproval', 'budgets'];

function settingsOf(project: ProjectState['project']): Record<string, JsonValue> {
  const { slug: _slug, ...rest } = project as unknown as Record<string, JsonValue>;
  return rest;
}

function settingChanges(before: ProjectState['project'], after: ProjectState['project']): ConfirmItem[] {
  const old = settingsOf(before);
  const now = settingsOf(after);
  const fields = [...new Set([...Object.keys(old), ...Object.keys(now)])].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  return fields
    .filter((field) => !jsonEqual(old[field], now[field]))
    .map((field) => ({ type: 'setting_changed', field, before: old[field], after: now[field] }));
}

function rank(field: string): number {
  const i = SETTING_ORDER.indexOf(field);
  return i === -1 ? SETTING_ORDER.length : i;
}

function killsOf(project: ProjectState): KilledFlag[] {
  return ENVIRONMENTS.flatMap((environment) => Object.keys(project.kills[environment].kills).map((flag) => ({ environment, flag })));
}

/** Splits a replaced project's diff into what needs --yes and the rest; project-level id and name are settings. */
function splitChanges(diff: FlagChange[], confirm: ConfirmItem[]): FlagChange[] {
  const rest: FlagChange[] = [];
  for (const change of diff) {
    const kept: ChangeItem[] = [];
    for (const item of change.changes) {
      if (change.flag === null) {
        if (item.type === 'segment_removed') confirm.push({ type: 'segment_deleted', segment: item.segmentKey });
        // A project whose project.yaml has issues is compared as absent, yet it is not added.
        else if (item.type !== 'field_changed' && item.type !== 'project_added') kept.push(item);
        continue;
      }
      if (item.type === 'flag_deleted') confirm.push({ type: 'flag_deleted', flag: change.flag });
      else if (item.type === 'flag_archived') confirm.push({ type: 'flag_archived', flag: change.flag });
      else if (item.type === 'field_changed' && item.field === 'id')
        confirm.push({ type: 'flag_id_changed', flag: change.flag, before: String(item.before), after: String(item.after) });
      else kept.push(item);
    }
    if (kept.length > 0) rest.push({ ...change, changes: kept });
  }
  return rest;
}

/**
 * What importing `imported` does to the project as it is (`before`; undefined when it is new or cannot be read).
 * A project that exists keeps its kills, so they are compared as its own; `brokenFiles` are the project's files
 * with issues, which the import deletes or, where `overwritten` says so, replaces with the directory's.
 */
export function planProject(
  slug: string,
  before: ProjectState | undefined,
  imported: ProjectState,
  exists: boolean,
  brokenFiles: readonly string[] = [],
  overwritten: (path: string) => boolean = () => false,
): ProjectPlan {
  const plan: ProjectPlan = {
    slug,
    action: exists ? 'replace' : 'create',
    confirm: [],
    changes: [],
    flags: [...imported.flags.keys()].sort(),
    segments: [...(imported.segments?.keys() ?? [])].sort(),
    settings: settingsOf(imported.project),
    kills: exists ? (before ? killsOf(before) : []) : killsOf(imported),
    killsIgnored: false,
  };
  if (!exists) return plan;
  const after: ProjectState = before ? { ...imported, kills: before.kills } : imported;
  if (before) {
    plan.confirm.push(...settingChanges(before.project, imported.project));
    plan.killsIgnored = ENVIRONMENTS.some(
      (env) => !jsonEqual(before.kills[env].kills as unknown as JsonValue, imported.kills[env].kills as unknown as JsonValue),
    );
  }
  const diff = diffStates(
    { commit: null, projects: new Map(before ? [[slug, before]] : []) },
    { commit: null, projects: new Map([[slug, after]]) },
  );
  plan.changes = splitChanges(diff, plan.confirm);
  for (const path of [...brokenFiles].sort()) plan.confirm.push({ type: 'file_with_issues', path, deleted: !overwritten(path) });
  return plan;
}

/**
 * The files of a replaced project whose content the plan changes: the import writes these, and files main does
 * not have, and leaves every other file as it is. A file that differs only in comments, layout or its `version`
 * is not rewritten: that would move its version (a client's expectedVersion answers 409) and make open proposals
 * on it stale, while nothing served changes and the plan says nothing of it.
 */
export function changedFiles(project: ProjectPlan): ReadonlySet<string> {
  const { slug } = project;
  const files = new Set<string>();
  for (const item of project.confirm) {
    if (item.type === 'setting_changed') files.add(layout.projectFile(slug));
    else if (item.type === 'flag_archived' || item.type === 'flag_id_changed') files.add(layout.flagFile(slug, item.flag));
    else if (item.type === 'file_with_issues') files.add(item.path);
  }
  for (const change of project.changes) {
    if (change.flag !== null) {
      files.add(
        change.environment === null ? layout.flagFile(slug, change.flag) : layout.configFile(slug, change.environment, change.flag),
      );
      continue;
    }
    for (const item of change.changes) {
      // The project's other items (approval, budgets) are project.yaml's.
      if (item.type === 'segment_added' || item.type === 'segment_changed') files.add(layout.segmentFile(slug, item.segmentKey));
      else files.add(layout.projectFile(slug));
    }
  }
  return files;
}

/** Whether anything in the plan needs --yes. */
export function needsConfirmation(plan: ImportPlan): boolean {
  return plan.projects.some((p) => p.confirm.length > 0);
}

/** Whether the import changes nothing. */
export function planIsEmpty(plan: ImportPlan): boolean {
  return plan.projects.every((p) => p.action === 'replace' && p.confirm.length === 0 && p.changes.length === 0);
}
