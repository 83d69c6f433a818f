import type { EnvironmentName, KillsFile, SnapshotFlag } from '@flagops/core';

/** What the control plane sends for one (project, environment): GET /api/v1/replica/snapshots/:projectId/:env. */
export interface ViewBody {
  projectId: string;
  projectSlug: string;
  environment: EnvironmentName;
  version: number;
  commit: string | null;
  flags: Record<string, SnapshotFlag>;
  kills: KillsFile;
}

/** One entry of the listing and of the stream's `version` events. */
export interface ViewListing {
  projectId: string;
  projectSlug: string;
  environment: EnvironmentName;
  version: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A defensive check of what came over the network or from disk: a bad body is never served. */
export function isViewBody(value: unknown): value is ViewBody {
  return (
    isObject(value) &&
    typeof value.projectId === 'string' &&
    typeof value.projectSlug === 'string' &&
    typeof value.environment === 'string' &&
    Number.isSafeInteger(value.version) &&
    isObject(value.flags) &&
    isObject(value.kills) &&
    isObject(value.kills.kills)
  );
}
