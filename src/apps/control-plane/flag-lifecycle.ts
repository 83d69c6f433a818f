import type { FlagLifecycle } from '@flagops/core';
import { normalizeLifecycle } from '../../foundations/repository/normalize.js';
import type { FlagCreateBody, FlagPatchBody } from '../../foundations/validation/api-bodies.js';

type LifecycleInput = NonNullable<FlagCreateBody['lifecycle']>;
type LifecyclePatch = NonNullable<FlagPatchBody['lifecycle']>;

/**
 * A PATCH merged into the current lifecycle (JSON merge patch): a field left out keeps its value, a field set
 * to null goes, and `null` for the whole lifecycle removes it (undefined: the flag has none).
 */
export function patchLifecycle(current: FlagLifecycle | undefined, patch: LifecyclePatch | null): FlagLifecycle | undefined {
  if (patch === null) return undefined;
  const merged: LifecycleInput = { ...current };
  if (patch.type !== undefined) merged.type = patch.type;
  for (const field of ['owner', 'expiresAt'] as const) {
    const value = patch[field];
    if (value === null) delete merged[field];
    else if (value !== undefined) merged[field] = value;
  }
  return normalizeLifecycle(merged);
}
