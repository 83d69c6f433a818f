import { ENVIRONMENTS, FLAG_KINDS, type JsonValue, OPERATORS, SEGMENT_OPERATORS } from '@flagops/core';
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

export const attributeCondition = z.object({
  attribute: z.string().min(1).max(256).describe('Context attribute to read; "userId" reads the context userId.'),
  op: z.enum(OPERATORS),
  value: jsonValue.describe(
    'A scalar for eq/neq/contains, an array for in/not_in, a number for gt/gte/lt/lte, a semantic version string for semver_*.',
  ),
});

/** Segment membership: no attribute; `value` is the segment key (list_segments shows them). */
export const segmentCondition = z.object({
  op: z.enum(SEGMENT_OPERATORS),
  value: z.string().min(1).max(64).describe('The segment key, e.g. "beta-testers".'),
});

export const condition = z.union([attributeCondition, segmentCondition]);

export const rule = z.object({
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

export const evaluationContext = z.object({
  userId: z.string().optional().describe('Drives percentage bucketing.'),
  attributes: z.record(z.string(), z.unknown()).optional().describe('Attributes matched by rule conditions, e.g. { "country": "DE" }.'),
});
