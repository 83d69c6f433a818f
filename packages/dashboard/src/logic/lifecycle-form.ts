import { FLAG_TYPES } from '@flagops/core';
import type { FlagLifecycle, FlagType } from '../types.js';

/** A lifecycle as a form holds it: strings, '' for a field not set. */
export interface LifecycleFields {
  type: string;
  owner: string;
  expiresAt: string;
}

/** What PATCH /api/v1/flags/:id takes as `lifecycle`: fields left out keep their value, null removes one. */
export interface LifecyclePatch {
  type?: FlagType;
  owner?: string | null;
  expiresAt?: string | null;
}

export const flagTypes: readonly FlagType[] = FLAG_TYPES;

/** `experiment flag · owner team-checkout · expires 2027-03-31`, or that the flag has none. */
export function lifecycleText(lifecycle: FlagLifecycle | undefined): string {
  if (!lifecycle) return 'No lifecycle set: type, owner and expiry unknown.';
  const parts = [`${lifecycle.type} flag`, lifecycle.owner ? `owner ${lifecycle.owner}` : 'no owner'];
  parts.push(lifecycle.expiresAt ? `expires ${lifecycle.expiresAt}` : 'no expiry');
  return parts.join(' · ');
}

/** The form's values for a flag's lifecycle; a flag without one shows the default type, release. */
export function lifecycleFields(lifecycle: FlagLifecycle | undefined): LifecycleFields {
  return { type: lifecycle?.type ?? 'release', owner: lifecycle?.owner ?? '', expiresAt: lifecycle?.expiresAt ?? '' };
}

const isFlagType = (value: string): value is FlagType => (flagTypes as readonly string[]).includes(value);

/** The lifecycle a new flag is created with: none while every field is empty (type '' means "not chosen"). */
export function newLifecycle(fields: LifecycleFields): Partial<FlagLifecycle> | undefined {
  const owner = fields.owner.trim();
  const expiresAt = fields.expiresAt.trim();
  if (fields.type === '' && owner === '' && expiresAt === '') return undefined;
  const lifecycle: Partial<FlagLifecycle> = {};
  if (isFlagType(fields.type)) lifecycle.type = fields.type;
  if (owner !== '') lifecycle.owner = owner;
  if (expiresAt !== '') lifecycle.expiresAt = expiresAt;
  return lifecycle;
}

/**
 * The PATCH that turns `current` into what the form says: only the fields that differ, an emptied one as
 * null; undefined when nothing differs. A flag without a lifecycle gets one as soon as anything is saved.
 */
export function lifecyclePatch(current: FlagLifecycle | undefined, fields: LifecycleFields): LifecyclePatch | undefined {
  const before = lifecycleFields(current);
  const patch: LifecyclePatch = {};
  if (isFlagType(fields.type) && (fields.type !== before.type || !current)) patch.type = fields.type;
  for (const field of ['owner', 'expiresAt'] as const) {
    const value = fields[field].trim();
    if (value !== before[field]) patch[field] = value === '' ? null : value;
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}
