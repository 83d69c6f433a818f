import { ENVIRONMENTS, FLAG_KINDS, FLAG_TYPES, type JsonValue, OPERATORS, SEGMENT_OPERATORS } from '@flagops/core';
import { z } from 'zod';

/**
 * Input fields shared by the tools. They check shape and range so an agent gets a precise error before any
 * request is sent; what needs the flag itself (a value of the wrong kind, a duplicate rule id) is left to
 * the control plane, whose answer comes back as the tool error.
 */

export const flagKey = z.string().min(1).max(128).describe('The flag key, e.g. "checkout-v2" (list_flags shows them all).');

export const environment = z.enum(ENVIRONMENTS).describe('The environment: dev, staging or prod.');

export const expectedVersion = z
  .number()
  .int()
  .min(0)
  .describe(
    "Optional optimistic lock: the environment's config version you read (get_flag shows it). If someone changed the config since, the call fails with version_conflict and nothing changes.",
  );

export const rolloutPct = z.number().min(0).max(100).describe('Percentage of users served valueOn, 0 to 100 (bucketed by userId).');

/** Any JSON value (tool arguments arrive as JSON, so typed as one); the API checks it against the flag's kind. */
export const jsonValue = z.unknown() as z.ZodType<JsonValue>;

export const attributeCondition = z.strictObject({
  attribute: z.string().min(1).max(256).describe('Context attribute to read; "userId" reads the context userId.'),
  op: z.enum(OPERATORS),
  value: jsonValue.describe(
    'A scalar for eq/neq/contains, an array for in/not_in, a number for gt/gte/lt/lte, a semantic version string for semver_*.',
  ),
});

/** Segment membership: no attribute; `value` is the segment key (list_segments shows them). */
export const segmentCondition = z.strictObject({
  op: z.enum(SEGMENT_OPERATORS),
  value: z.string().min(1).max(64).describe('The segment key, e.g. "beta-testers".'),
});

export const condition = z.union([attributeCondition, segmentCondition]);

export const rule = z.strictObject({
  id: z.string().min(1).max(64).optional().describe('Stable rule id; omit it and the server assigns one.'),
  description: z.string().max(4096).optional(),
  conditions: z.array(condition).max(32).optional().describe('All must hold for the rule to match; none: always matches.'),
  serve: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,62}$/)
    .describe(
      'on serves valueOn (or a variant by the variant bucket when the config has variants), off serves valueOff, or a variant name serves that variant.',
    ),
  rolloutPct: rolloutPct.optional().describe('Apply the rule only to this percentage of matching users (needs a userId).'),
});

export const rules = z
  .array(rule)
  .max(64)
  .describe('The whole rule list, in order; it replaces the current rules. The first rule that applies wins.');

export const flagKind = z.enum(FLAG_KINDS);

export const evaluationContext = z.strictObject({
  userId: z.string().optional().describe('Drives percentage bucketing.'),
  attributes: z.record(z.string(), z.unknown()).optional().describe('Attributes matched by rule conditions, e.g. { "country": "DE" }.'),
});

export const flagType = z
  .enum(FLAG_TYPES)
  .describe(
    'What the flag is for: release (default) and experiment flags are meant to be removed once rolled out; operational, permission and kill-switch flags stay.',
  );

export const flagOwner = z.string().min(1).max(256).describe('Who owns the flag: a team or a person, e.g. "team-checkout".');

export const flagExpiresAt = z
  .string()
  .describe('When the flag should be gone: an ISO 8601 date (2027-03-31, the end of that day in UTC) or date-time (2027-03-31T12:00:00Z).');

/** A new flag's lifecycle; type release when left out. */
export const flagLifecycle = z
  .object({ type: flagType.optional(), owner: flagOwner.optional(), expiresAt: flagExpiresAt.optional() })
  .describe('What the flag is for, who owns it and when it should be gone (stale-flag detection works from it).');

/** A change to a lifecycle: fields left out keep their value, null removes owner or expiresAt. */
export const flagLifecyclePatch = z.strictObject({
  type: flagType.optional(),
  owner: flagOwner.nullable().optional().describe('The new owner; null removes it.'),
  expiresAt: flagExpiresAt.nullable().optional().describe('The new expiry (ISO 8601 date or date-time); null removes it.'),
});
