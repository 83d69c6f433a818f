import { type EnvironmentName, type FlagState, type JsonValue, type ProjectState, type SnapshotFlag, setOwn } from '@flagops/core';

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
  };
}

/**
 * Every flag of one environment of a project, archived and disabled ones included (contract §4), all with
 * `killed` false: kills are an overlay of their own (the fast path).
 */
export function snapshotFlags(project: ProjectState, env: EnvironmentName): Record<string, SnapshotFlag> {
  const out: Record<string, SnapshotFlag> = {};
  for (const [key, flag] of project.flags) setOwn(out, key, snapshotFlag(flag, env, false));
  return out;
}
