import {
  type Budgets,
  ENVIRONMENTS,
  type EnvironmentConfig,
  type EnvironmentName,
  type FlagKind,
  type JsonValue,
  type ProjectFile,
  type RequireApproval,
  type ScheduleStep,
} from '@flagops/core';
import { type InvalidFile, invalidFile } from '../../foundations/repository/held-units.js';
import type { FlagRef } from '../../foundations/repository/state-lookup.js';
import { heldBackBy, type ServedState } from '../../foundations/storage/index.js';

export interface ProjectView {
  id: string;
  name: string;
  slug: string;
  environments: Array<{ id: string; name: EnvironmentName }>;
  /** Per environment, the actor types whose changes into it wait for approval; absent when none. */
  requireApproval?: RequireApproval;
  /** Per environment, the hourly moved-share budget of the listed actor types; absent when none. */
  budgets?: Budgets;
  /** Only while an invalid project.yaml or kills.yaml holds the whole project back at its last valid state. */
  invalidFiles?: InvalidFile[];
}

/**
 * An environment's id is `<projectId>:<env>`: environments are fixed and live inside their project, so the
 * id is derived, stable across servers, and needs no file of its own.
 */
export function environmentId(projectId: string, env: EnvironmentName): string {
  return `${projectId}:${env}`;
}

export function projectView(project: ProjectFile, invalidFiles: InvalidFile[] = []): ProjectView {
  const view: ProjectView = {
    id: project.id,
    name: project.name,
    slug: project.slug,
    environments: ENVIRONMENTS.map((env) => ({ id: environmentId(project.id, env), name: env })),
  };
  if (project.requireApproval) view.requireApproval = project.requireApproval;
  if (project.budgets) view.budgets = project.budgets;
  if (invalidFiles.length > 0) view.invalidFiles = invalidFiles;
  return view;
}

export interface EnvironmentConfigView extends EnvironmentConfig {
  /** An active kill, from the environment's kills.yaml; killedAt/killedBy only while killed. */
  killed: boolean;
  killedAt?: string;
  killedBy?: string;
  killReason?: string;
  /** The steps the scheduler will apply, oldest first; [] when there are none. */
  schedule: ScheduleStep[];
  /** The step that falls due next, or null. */
  nextStep: ScheduleStep | null;
}

export interface FlagView {
  id: string;
  key: string;
  name: string;
  description: string;
  kind: FlagKind;
  defaultValue: JsonValue;
  archivedAt: string | null;
  projectId: string;
  projectSlug: string;
  environments: Record<EnvironmentName, EnvironmentConfigView>;
  /**
   * Only while an invalid file on main holds the flag back (one of its own files, or its project's
   * project.yaml or a kills.yaml): the flag shows, and serves, its last valid state until they are fixed.
   */
  invalidFiles?: InvalidFile[];
}

/** The flag response of every flag endpoint, from the served state: with invalidFiles while it is held back. */
export function servedFlagView(served: ServedState, ref: FlagRef): FlagView {
  const view = flagView(ref);
  const held = heldBackBy(served, ref.project.project.slug, ref.flag.meta.key);
  if (held.length > 0) view.invalidFiles = held.map(invalidFile);
  return view;
}

/** A flag as served. A flag without a name is shown by its key. */
export function flagView({ project, flag }: FlagRef): FlagView {
  const { meta } = flag;
  const environments = {} as Record<EnvironmentName, EnvironmentConfigView>;
  for (const env of ENVIRONMENTS) {
    const config = flag.environments[env];
    const kill = project.kills[env].kills[meta.key];
    const view: EnvironmentConfigView = {
      enabled: config.enabled,
      rolloutPct: config.rolloutPct,
      valueOn: config.valueOn,
      valueOff: config.valueOff,
      version: config.version,
      rules: config.rules,
      killed: kill !== undefined,
      schedule: config.schedule ?? [],
      nextStep: config.schedule?.[0] ?? null,
    };
    if (config.variants) view.variants = config.variants;
    if (config.prerequisites) view.prerequisites = config.prerequisites;
    if (kill) {
      view.killedAt = kill.killedAt;
      view.killedBy = kill.killedBy;
      if (kill.reason !== undefined) view.killReason = kill.reason;
    }
    environments[env] = view;
  }
  return {
    id: meta.id,
    key: meta.key,
    name: meta.name ?? meta.key,
    description: meta.description ?? '',
    kind: meta.kind,
    defaultValue: meta.defaultValue ?? null,
    archivedAt: meta.archivedAt,
    ...(meta.lifecycle ? { lifecycle: meta.lifecycle } : {}),
    projectId: project.project.id,
    projectSlug: project.project.slug,
    environments,
  };
}
