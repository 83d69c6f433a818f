import { z } from 'zod';
import { defineTool, toolSuccess } from './define-tool.js';
import { flagSummaryLine, flagText } from './flag-text.js';
import { flagKey, flagKind, jsonValue } from './inputs.js';

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
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ key, name, description, kind, defaultValue }, { scope }) {
    const created = await scope.api.createFlag(await scope.projectId(), { key, name, description, kind, defaultValue });
    return toolSuccess(`Created ${key} in ${scope.slug}.\n${flagText(created)}`, { flag: created });
  },
});
