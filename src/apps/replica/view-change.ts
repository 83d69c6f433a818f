import type { EnvironmentName, KillsFile } from '@flagops/core';
import type { EnvironmentView } from '../eval-server/environment-view.js';

/** Which view changed, and its new version: what every change on the replica feed carries. */
interface ChangedView {
  projectId: string;
  projectSlug: string;
  environment: EnvironmentName;
  version: number;
}

/** Only the kills changed: the replica applies them over the flags of `baseVersion`, which it serves. */
export interface KillChange extends ChangedView {
  type: 'kill';
  /** The version whose flags the kills apply to: the view's version before the kill. */
  baseVersion: number;
  commit: string | null;
  /** The environment's kills, whole (not the difference). */
  kills: KillsFile;
}

/** The flags or segments changed: the replica fetches the view. */
export interface FlagsChange extends ChangedView {
  type: 'flags';
}

/**
 * The data of a `version` event on GET /api/v1/replica/stream. A replica that predates `type` reads the
 * listing fields alone and fetches the view, which is still right; a control plane that predates it sends
 * no `type`, which a replica takes as a flags change.
 */
export type ViewChange = KillChange | FlagsChange;

/** The change a view swapped in on the control plane is: a kill when it only carries a new kill overlay. */
export function viewChange(view: EnvironmentView): ViewChange {
  const { projectId, projectSlug, environment, version } = view;
  if (view.baseVersion === undefined) return { type: 'flags', projectId, projectSlug, environment, version };
  return {
    type: 'kill',
    projectId,
    projectSlug,
    environment,
    version,
    baseVersion: view.baseVersion,
    commit: view.commit,
    kills: view.kills,
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A defensive check of a kill event from the network: anything else is handled as a flags change (a fetch). */
export function isKillChange(value: unknown): value is KillChange {
  return (
    isObject(value) &&
    value.type === 'kill' &&
    typeof value.projectId === 'string' &&
    typeof value.environment === 'string' &&
    Number.isSafeInteger(value.version) &&
    Number.isSafeInteger(value.baseVersion) &&
    (value.commit === null || typeof value.commit === 'string') &&
    isObject(value.kills) &&
    isObject(value.kills.kills) &&
    Object.values(value.kills.kills).every(isObject)
  );
}
