import { z } from 'zod';
import { escapedControls } from '../../../foundations/validation/one-line.js';
import type { SegmentResponse } from '../api-types.js';
import { defineTool, toolSuccess } from './define-tool.js';
import { configNotes, environmentLine } from './flag-text.js';
import { attributeCondition, environment, expectedVersion, flagKey, jsonValue } from './inputs.js';

// Variants, segments and prerequisites (docs/evaluation.md): the tools that set them.

const variant = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,62}$/)
    .describe('The variation name results carry: a lower-case letter, then letters, digits, _ or -; not on, off or default.'),
  value: jsonValue.describe("The value this variant serves; it must fit the flag's kind."),
  weight: z
    .number()
    .min(0)
    .max(100)
    .describe('Percent of the users who would get valueOn; at most two decimals; all weights add up to 100.'),
  description: z.string().max(4096).optional(),
});

const segmentKey = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/)
  .describe('The segment key, e.g. "beta-testers" (list_segments shows them).');

/** Segment tools name segment tools: the common hints would send an agent to get_flag and list_flags. */
const SEGMENT_NEXT = {
  not_found: 'Check the segment key with list_segments.',
  version_conflict:
    'The segment changed since you read it. Call get_segment to read the current version, check that your change still makes sense, then retry with expectedVersion set to that version.',
  conflict: 'Read the segment with get_segment and decide again.',
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export const setVariants = defineTool({
  name: 'set_variants',
  title: 'Set the variants (A/B/n split) of a flag in one environment',
  description: [
    'Sets the variants of a flag in one environment: wherever the config would serve valueOn, each user gets one variant by a stable variant bucket, in proportion to the weights (which add up to exactly 100).',
    'Results then carry the variant name as variation. A rule can serve one variant to everyone it matches (update_flag_config with serve: "<name>").',
    'Pass variants: null to remove them (valueOn is served again). Applies immediately and is audited as a config_update; pass expectedVersion to guard against concurrent edits.',
  ].join(' '),
  input: {
    key: flagKey,
    env: environment,
    variants: z.array(variant).min(1).max(32).nullable().describe('The whole list of variants (1 to 32), or null to remove them.'),
    expectedVersion: expectedVersion.optional(),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ key, env, variants, expectedVersion }, { scope }) {
    const flag = await scope.flag(key);
    const after = await scope.api.updateConfig(flag.id, env, { variants, expectedVersion });
    const split = variants === null ? 'removed them; valueOn is served again' : variants.map((v) => `${v.name} ${v.weight}%`).join(', ');
    const summary = [
      `Set the variants of ${key} in ${env}: ${split}.`,
      environmentLine(env, after.environments[env]),
      ...configNotes(after, env),
    ];
    return toolSuccess(summary.join('\n'), { flag: after });
  },
});

export const setPrerequisites = defineTool({
  name: 'set_prerequisites',
  title: 'Set the prerequisites of a flag in one environment',
  description: [
    'Sets the flags that must serve a given variation (on or off; for a flag with variants in this environment, off or one of its variants, which it serves instead of on; each flag once), for the same user in the same environment, before this flag is evaluated further; otherwise it serves valueOff with reason prerequisite_failed.',
    'A killed prerequisite serves off, so killing it turns its dependants off too. The flags must be of this project and form no cycle.',
    'Pass an empty list to remove them. Applies immediately and is audited as a config_update.',
  ].join(' '),
  input: {
    key: flagKey,
    env: environment,
    prerequisites: z
      .array(
        z.strictObject({
          flag: flagKey,
          variation: z.string().min(1).max(63).describe('on, off or a variant name that flag has in this environment.'),
        }),
      )
      .max(16),
    expectedVersion: expectedVersion.optional(),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ key, env, prerequisites, expectedVersion }, { scope }) {
    const flag = await scope.flag(key);
    const after = await scope.api.updateConfig(flag.id, env, { prerequisites, expectedVersion });
    const words = prerequisites.length === 0 ? 'none' : prerequisites.map((p) => `${p.flag} must serve ${p.variation}`).join(', ');
    const summary = [
      `Set the prerequisites of ${key} in ${env}: ${words}.`,
      environmentLine(env, after.environments[env]),
      ...configNotes(after, env),
    ];
    return toolSuccess(summary.join('\n'), { flag: after });
  },
});

function segmentLine(s: SegmentResponse): string {
  const used = s.usedBy.length === 0 ? 'unused' : `used by ${s.usedBy.join(', ')}`;
  return escapedControls(
    `${s.key}${s.name && s.name !== s.key ? ` (${s.name})` : ''}: ${plural(s.userIds.length, 'user id')}, ${plural(s.conditions.length, 'condition')}, ${used}`,
  );
}

export const listSegments = defineTool({
  name: 'list_segments',
  title: 'List the segments of the project',
  description:
    'Lists the reusable audiences of the project: each segment with its size (user ids, conditions) and the flags whose rules use it (in_segment / not_in_segment). Read-only.',
  input: {},
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(_args, { scope }) {
    const { segments } = await scope.api.listSegments(await scope.projectId());
    return toolSuccess(segments.length === 0 ? 'The project has no segments.' : segments.map(segmentLine).join('\n'), { segments });
  },
});

export const getSegment = defineTool({
  name: 'get_segment',
  title: 'Read one segment',
  description: 'Reads one segment: its user ids, its conditions, its version (for expectedVersion) and the flags that use it. Read-only.',
  input: { segment: segmentKey },
  annotations: { readOnlyHint: true, openWorldHint: false },
  nextSteps: SEGMENT_NEXT,
  async run({ segment }, { scope }) {
    const found = await scope.api.getSegment(await scope.projectId(), segment);
    return toolSuccess(`${segmentLine(found)}; version ${found.version}`, { segment: found });
  },
});

export const upsertSegment = defineTool({
  name: 'upsert_segment',
  title: 'Create or replace a segment',
  description: [
    'Creates or replaces a segment of the project: a user is in it when their userId is listed (at most 10,000) or when all its conditions hold (at most 32, on attributes).',
    'The call gives the whole segment: fields left out become empty. Every flag using the segment changes with it, in every environment. Audited as segment_update; pass expectedVersion (0 for a new segment) to guard against concurrent edits.',
  ].join(' '),
  input: {
    segment: segmentKey,
    name: z.string().min(1).max(256).optional(),
    description: z.string().max(4096).optional(),
    userIds: z.array(z.string().min(1).max(1024)).max(10_000).optional(),
    conditions: z.array(attributeCondition).max(32).optional(),
    expectedVersion: expectedVersion.optional(),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  nextSteps: SEGMENT_NEXT,
  async run({ segment, ...body }, { scope }) {
    const { created, segment: after } = await scope.api.putSegment(await scope.projectId(), segment, body);
    return toolSuccess(
      `${created ? 'Created' : 'Replaced'} segment ${segment}: ${plural(after.userIds.length, 'user id')}, ${plural(after.conditions.length, 'condition')}.`,
      {
        segment: after,
      },
    );
  },
});

export const deleteSegment = defineTool({
  name: 'delete_segment',
  title: 'Delete a segment',
  description:
    'Deletes a segment of the project. Refused (conflict) while a flag rule uses it: remove it from those rules first. Audited as segment_delete.',
  input: { segment: segmentKey },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  nextSteps: {
    ...SEGMENT_NEXT,
    conflict:
      'The segment is still in use: remove it from the rules of the flags named (update_flag_config with rules, in each environment named), then delete it again.',
  },
  async run({ segment }, { scope }) {
    const deleted = await scope.api.deleteSegment(await scope.projectId(), segment);
    return toolSuccess(`Deleted segment ${segment}.`, { segment: deleted });
  },
});
