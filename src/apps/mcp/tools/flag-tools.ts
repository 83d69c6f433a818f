import { z } from 'zod';
import { ApiError } from '../control-plane-client.js';
import { defineTool, toolSuccess } from './define-tool.js';
import { flagSummaryLine, flagText } from './flag-text.js';
import { flagKey, flagKind, flagLifecycle, flagLifecyclePatch, jsonValue } from './inputs.js';

export const listFlags = defineTool({
  name: 'list_flags',
  title: 'List the flags of the project',
  description:
    'Lists every flag of the project (FLAGOPS_PROJECT) with its state in dev, staging and prod: KILLED, off, or on with its rollout. Read-only. Use it to find flag keys; get_flag gives one flag in full.',
  input: {},
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(_args, { scope }) {
    const { flags } = await scope.api.listFlags(await scope.projectId());
    const lines = flags.map(flagSummaryLine);
    const summary =
      flags.length === 0 ? `Project ${scope.slug} has no flags.` : [`${flags.length} flag(s) in ${scope.slug}:`, ...lines].join('\n');
    return toolSuccess(summary, { projectSlug: scope.slug, flags });
  },
});

export const getFlag = defineTool({
  name: 'get_flag',
  title: 'Read one flag',
  description: [
    'Reads one flag of the project: kind, values, and per environment (dev, staging, prod) enabled, rolloutPct, rules,',
    'the config version (pass it as expectedVersion to the write tools) and whether it is KILLED (with when, by whom, why).',
    'Read-only. Call it before changing a flag and after a version_conflict.',
  ].join(' '),
  input: { key: flagKey },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ key }, { scope }) {
    const flag = await scope.flag(key);
    return toolSuccess(flagText(flag), { flag });
  },
});

export const createFlag = defineTool({
  name: 'create_flag',
  title: 'Create a flag',
  description: [
    'Creates a flag in the project with a config in every environment, each disabled at rollout 0% (it serves valueOff everywhere until you change it). Audited as flag_create.',
    'Fails with conflict if the key exists (read it with get_flag instead). Then turn it on with update_flag_config, starting in dev.',
  ].join(' '),
  input: {
    key: flagKey.describe('The new business key: letters, digits, ".", "_" or "-", starting with a letter or digit.'),
    name: z.string().min(1).max(256).optional().describe('Display name.'),
    description: z.string().max(4096).optional(),
    kind: flagKind.optional().describe('boolean (default), string, number or json; values must fit it.'),
    defaultValue: jsonValue.optional().describe('Served if the flag is archived; must fit the kind.'),
    lifecycle: flagLifecycle.optional(),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  nextSteps: {
    conflict: 'If the message says it exists already, read it with get_flag instead of creating it; if it says to try again, retry.',
  },
  async run({ key, name, description, kind, defaultValue, lifecycle }, { scope }) {
    const created = await scope.api.createFlag(await scope.projectId(), { key, name, description, kind, defaultValue, lifecycle });
    return toolSuccess(`Created ${key} in ${scope.slug}.\n${flagText(created)}`, { flag: created });
  },
});

export const updateFlag = defineTool({
  name: 'update_flag',
  title: "Change a flag's name, description or lifecycle",
  description: [
    "Changes a flag's metadata, not what it serves: its name, description, and lifecycle (type, owner, expiresAt).",
    'Lifecycle fields you leave out keep their value; owner or expiresAt null removes that field; lifecycle null removes the lifecycle.',
    'Applies at once in one commit, audited as flag_update; sending what is already there changes nothing. Read the flag with get_flag first.',
  ].join(' '),
  input: {
    key: flagKey,
    name: z.string().min(1).max(256).optional().describe('New display name.'),
    description: z.string().max(4096).optional().describe('New description.'),
    lifecycle: flagLifecyclePatch
      .nullable()
      .optional()
      .describe('What the flag is for, who owns it, when it should be gone: merged into the current lifecycle; null removes it.'),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ key, name, description, lifecycle }, { scope }) {
    if (name === undefined && description === undefined && lifecycle === undefined) {
      throw new ApiError('invalid_input', 'nothing to change: give at least one of name, description, lifecycle');
    }
    const flag = await scope.flag(key);
    const updated = await scope.api.patchFlag(flag.id, { name, description, lifecycle });
    return toolSuccess(`Updated ${key} in ${scope.slug}.\n${flagText(updated)}`, { flag: updated });
  },
});
