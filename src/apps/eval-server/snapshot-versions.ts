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
import type { ServingRepository } from './serving-repository.js';

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
 * chain) only the commits since it are read; otherwise the walk goes back until every key is resolved. A key
 * whose project appears nowhere back to the root commit is 0.
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
      for (const [slug, envs] of pending)
        for (const env of envs) result.set(versionKey(slug, env), known.versions.get(versionKey(slug, env)) ?? 0);
      return result;
    }
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
