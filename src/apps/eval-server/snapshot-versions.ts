import {
  ENVIRONMENTS,
  type EnvironmentName,
  type FlagState,
  type JsonValue,
  type ProjectState,
  type SnapshotFlag,
  type SnapshotSegment,
  setOwn,
} from '@flagops/core';
import { loopTurn } from '../../foundations/process/loop-turns.js';
import type { ServingRepository } from './serving-repository.js';
import { entryJson } from './snapshot-text.js';

/** The snapshot entry of one flag in one environment, kill state aside (the kill overlay adds it). */
export function snapshotFlag(flag: FlagState, env: EnvironmentName, killed: boolean): SnapshotFlag {
  const config = flag.environments[env];
  return {
    enabled: config.enabled,
    rolloutPct: config.rolloutPct,
    valueOn: config.valueOn,
    valueOff: config.valueOff,
    rules: config.rules,
    killed,
    archived: flag.meta.archivedAt !== null,
    defaultValue: (flag.meta.defaultValue ?? null) as JsonValue,
    ...(config.variants ? { variants: config.variants } : {}),
    ...(config.prerequisites ? { prerequisites: config.prerequisites } : {}),
  };
}

/** The project's segments as every environment's snapshot carries them, keyed by segment key. */
export function snapshotSegments(project: ProjectState): Record<string, SnapshotSegment> {
  const out: Record<string, SnapshotSegment> = {};
  for (const [key, segment] of project.segments ?? []) setOwn(out, key, { userIds: segment.userIds, conditions: segment.conditions });
  return out;
}

/**
 * Every flag of one environment of a project, archived and disabled ones included, all with
 * `killed` false: kills are an overlay of their own (the fast path).
 */
export function snapshotFlags(project: ProjectState, env: EnvironmentName): Record<string, SnapshotFlag> {
  const out: Record<string, SnapshotFlag> = {};
  for (const [key, flag] of project.flags) setOwn(out, key, snapshotFlag(flag, env, false));
  return out;
}

/** An environment's snapshot entries with their keys in snapshot order (a big object's Object.keys is not free). */
export interface SnapshotEntries {
  readonly flags: Readonly<Record<string, SnapshotFlag>>;
  readonly keys: readonly string[];
}

/** What changed between two states of a project's flags, whatever the environment. */
export interface ProjectFlagChanges {
  /** The keys whose flag state is not the same object as before, new ones included. */
  readonly touched: readonly string[];
  /** The same keys as before, in the same order. */
  readonly sameKeys: boolean;
}

/**
 * The flags whose state changed since `before`: the store keeps the state object of every flag whose files did
 * not change, so this compares references, and nothing is read of the flags that did not change.
 */
export function projectFlagChanges(project: ProjectState, before: ProjectState): ProjectFlagChanges {
  if (project.flags === before.flags) return { touched: [], sameKeys: true };
  const touched: string[] = [];
  let sameKeys = project.flags.size === before.flags.size;
  const previousKeys = before.flags.keys();
  for (const [key, flag] of project.flags) {
    if (sameKeys && previousKeys.next().value !== key) sameKeys = false;
    if (before.flags.get(key) !== flag) touched.push(key);
  }
  return { touched, sameKeys };
}

/**
 * The entries of one environment of `project`, given `before` (the project state `previous` was made from)
 * and what changed since (projectFlagChanges): a flag whose state, or whose config in `env` and metadata, are
 * the objects they were keeps its entry object; another one is made anew and kept only when its JSON differs.
 * So an unchanged flag's entry is the same object from view to view, `changed` names exactly the entries that
 * are not, and `previous` itself comes back when nothing of the environment changed.
 */
export function nextSnapshotFlags(
  project: ProjectState,
  env: EnvironmentName,
  before: ProjectState,
  previous: SnapshotEntries,
  changes: ProjectFlagChanges,
): SnapshotEntries & { readonly changed?: ReadonlySet<string> } {
  const entryOf = (key: string, flag: FlagState): SnapshotFlag => {
    const old = before.flags.get(key);
    const kept = Object.hasOwn(previous.flags, key) ? previous.flags[key] : undefined;
    if (kept !== undefined && old !== undefined && (old === flag || sameEntrySource(old, flag, env))) return kept;
    const entry = snapshotFlag(flag, env, false);
    return kept !== undefined && entryJson(kept) === entryJson(entry) ? kept : entry;
  };
  const changed = new Set<string>();
  const flags: Record<string, SnapshotFlag> = {};
  if (changes.sameKeys && previous.keys.length === project.flags.size) {
    const replaced = new Map<string, SnapshotFlag>();
    for (const key of changes.touched) {
      const entry = entryOf(key, project.flags.get(key)!);
      if (entry !== previous.flags[key]) replaced.set(key, entry);
    }
    if (replaced.size === 0) return previous;
    for (const key of previous.keys) setOwn(flags, key, replaced.get(key) ?? previous.flags[key]);
    for (const key of replaced.keys()) changed.add(key);
    return { flags, keys: previous.keys, changed };
  }
  let keys: string[] = [];
  let indexKeys = false;
  for (const [key, flag] of project.flags) {
    const entry = entryOf(key, flag);
    if (!Object.hasOwn(previous.flags, key) || entry !== previous.flags[key]) changed.add(key);
    setOwn(flags, key, entry);
    keys.push(key);
    indexKeys ||= ARRAY_INDEX.test(key);
  }
  // Keys like "123" come first in an object, in numeric order: the order JSON.stringify writes them in.
  if (indexKeys) keys = Object.keys(flags);
  return { flags, keys, changed };
}

const ARRAY_INDEX = /^(?:0|[1-9][0-9]{0,9})$/;

/** Whether two states of a flag make the same entry in `env` without comparing values: the same objects. */
function sameEntrySource(a: FlagState, b: FlagState, env: EnvironmentName): boolean {
  return (
    a.environments[env] === b.environments[env] && a.meta.archivedAt === b.meta.archivedAt && a.meta.defaultValue === b.meta.defaultValue
  );
}

/**
 * Snapshot versions: the version of (project, environment) at commit C is the height (first-parent
 * commit count) of the newest first-parent ancestor-or-self of C that changed what that environment serves
 * (ServingRepository.servedChanges: its flags, configs or kills, and nothing that only touched files an
 * invalid file holds back). It depends on history alone, so every server reading the same commit computes the
 * same number; it grows with every change of the served snapshot, kills included, and stays put when another
 * environment or project changes, or when a commit only touches a held-back flag.
 */
export type VersionKey = `${string}/${EnvironmentName}`;

export const versionKey = (slug: string, env: EnvironmentName): VersionKey => `${slug}/${env}`;

/** Every (project, environment) key of the given project slugs. */
export function allVersionKeys(slugs: Iterable<string>): VersionKey[] {
  const keys: VersionKey[] = [];
  for (const slug of slugs) for (const env of ENVIRONMENTS) keys.push(versionKey(slug, env));
  return keys;
}

function splitKey(key: VersionKey): { slug: string; env: EnvironmentName } {
  const slash = key.lastIndexOf('/');
  return { slug: key.slice(0, slash), env: key.slice(slash + 1) as EnvironmentName };
}

/**
 * The versions of `keys` at `head`. With `known` (the versions at an earlier commit on the same first-parent
 * chain) only the commits since it are read for the keys it has; otherwise the walk goes back until every key
 * is resolved. A key whose project appears nowhere back to the root commit is 0.
 */
export async function snapshotVersions(
  repo: ServingRepository,
  head: string,
  keys: readonly VersionKey[],
  known?: { commit: string; versions: ReadonlyMap<VersionKey, number> },
): Promise<Map<VersionKey, number>> {
  const result = new Map<VersionKey, number>();
  const pending = new Map<string, Set<EnvironmentName>>();
  for (const key of keys) {
    const { slug, env } = splitKey(key);
    const envs = pending.get(slug) ?? new Set<EnvironmentName>();
    envs.add(env);
    pending.set(slug, envs);
  }
  let commit: string | undefined = head;
  while (pending.size > 0 && commit !== undefined) {
    if (known && commit === known.commit) {
      // A project not served there is walked further back, so its version is the one a fresh start computes.
      for (const [slug, envs] of [...pending]) {
        for (const env of [...envs]) {
          const version = known.versions.get(versionKey(slug, env));
          if (version === undefined) continue;
          result.set(versionKey(slug, env), version);
          envs.delete(env);
        }
        if (envs.size === 0) pending.delete(slug);
      }
      if (pending.size === 0) return result;
    }
    // A push of many commits is walked back here once, beside the evaluations it would otherwise hold up.
    await loopTurn();
    let height: number | undefined;
    for (const [slug, envs] of [...pending]) {
      const changed = await repo.servedChanges(commit, slug);
      for (const env of envs) {
        if (!changed.has(env)) continue;
        height ??= await repo.height(commit);
        result.set(versionKey(slug, env), height);
        envs.delete(env);
      }
      if (envs.size === 0) pending.delete(slug);
    }
    commit = (await repo.readCommit(commit)).parents[0];
  }
  for (const [slug, envs] of pending) for (const env of envs) result.set(versionKey(slug, env), 0);
  return result;
}
