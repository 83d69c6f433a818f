import { z } from 'zod';
import { ApiError } from '../api/api-error.js';
import type { ConfigUpdate } from '../api/api-types.js';
import { environmentLine } from '../format/flag-text.js';
import { configNotes } from './config-notes.js';
import { defineTool } from './define-tool.js';
import { environment, expectedVersion, flagKey, jsonValue, rolloutPct, rules } from './inputs.js';
import { toolSuccess } from './tool-result.js';

const CONFIG_FIELDS = ['enabled', 'rolloutPct', 'rules', 'valueOn', 'valueOff'] as const;

export const updateFlagConfig = defineTool({
  name: 'update_flag_config',
  title: "Update a flag's config in one environment",
  description: [
    "Changes a flag's config in one environment: any of enabled, rolloutPct, rules (the whole list, replacing the current one), valueOn, valueOff.",
    'Fields you leave out keep their value. It applies immediately and is audited as a config_update; the version goes up by one.',
    'It does not lift a kill (use clear_kill). Values must fit the flag kind (a boolean flag takes true/false).',
    'Pass expectedVersion (from get_flag) to guard against concurrent edits; version_conflict means re-read the flag and retry with the new version.',
  ].join(' '),
  input: {
    key: flagKey,
    env: environment,
    enabled: z.boolean().optional().describe('Whether the flag is on in this environment; disabled serves valueOff.'),
    rolloutPct: rolloutPct.optional(),
    rules: rules.optional(),
    valueOn: jsonValue.optional().describe('Value served when the flag resolves on.'),
    valueOff: jsonValue.optional().describe('Value served when the flag resolves off (and while killed).'),
    expectedVersion: expectedVersion.optional(),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { scope }) {
    const update: ConfigUpdate = {};
    for (const field of CONFIG_FIELDS) {
      if (args[field] !== undefined) (update as Record<string, unknown>)[field] = args[field];
    }
    if (Object.keys(update).length === 0) {
      throw new ApiError('invalid_input', `nothing to change: give at least one of ${CONFIG_FIELDS.join(', ')}`);
    }
    if (args.expectedVersion !== undefined) update.expectedVersion = args.expectedVersion;
    const flag = await scope.flag(args.key);
    const after = await scope.api.updateConfig(flag.id, args.env, update);
    const state = after.environments[args.env];
    const changed = Object.keys(update).filter((f) => f !== 'expectedVersion');
    const summary = [
      `Updated ${changed.join(', ')} of ${args.key} in ${args.env}.`,
      environmentLine(args.env, state),
      ...configNotes(args.env, state),
    ];
    return toolSuccess(summary.join('\n'), { flag: after });
  },
});
