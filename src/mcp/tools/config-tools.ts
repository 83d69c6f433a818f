import { z } from 'zod';
import type { ConfigUpdate, EnvironmentState } from '../api-types.js';
import { ApiError } from '../control-plane-client.js';
import { defineTool, toolError, toolSuccess } from './define-tool.js';
import { environmentLine } from './flag-text.js';
import { environment, expectedVersion, flagKey, jsonValue, rolloutPct, rules } from './inputs.js';

/**
 * What a config change does not do by itself, said after the change: an agent that raised a rollout
 * should not believe users now get valueOn while a kill or `enabled: false` still decides first (docs/evaluation.md).
 */
export function configNotes(env: string, state: EnvironmentState): string[] {
  const notes: string[] = [];
  if (state.killed) notes.push(`Note: the flag is KILLED in ${env}; the kill still overrides this config until clear_kill.`);
  else if (!state.enabled) notes.push(`Note: the flag is disabled in ${env}; it serves valueOff until enabled is true.`);
  return notes;
}

export const setRollout = defineTool({
  name: 'set_rollout',
  title: 'Set the rollout percentage of a flag',
  description: [
    'Sets the percentage of users (bucketed by userId, stable per user) served valueOn in one environment; rules still come first. Applies immediately and is audited as a config_update.',
    'Only the rollout changes: it does not enable a disabled flag (use update_flag_config) and does not lift a kill.',
    'Pass expectedVersion (from get_flag) to guard against concurrent edits; version_conflict means re-read the flag and retry with the new version.',
  ].join(' '),
  input: { key: flagKey, env: environment, rolloutPct, expectedVersion: expectedVersion.optional() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ key, env, rolloutPct, expectedVersion }, { scope }) {
    const flag = await scope.flag(key);
    const after = await scope.api.updateConfig(flag.id, env, { rolloutPct, expectedVersion });
    const state = after.environments[env];
    return toolSuccess(
      [`Set the rollout of ${key} in ${env} to ${rolloutPct}%.`, environmentLine(env, state), ...configNotes(env, state)].join('\n'),
      {
        flag: after,
      },
    );
  },
});

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

export const promoteFlag = defineTool({
  name: 'promote_flag',
  title: "Promote a flag's config to another environment",
  description: [
    "Copies a flag's whole config (enabled, rolloutPct, rules, valueOn, valueOff) from one environment to another, replacing the destination's; applies immediately and is audited.",
    'A kill in the destination stays as it is. Use it to move a tested config dev → staging.',
    'Promoting into prod is a deploy: an agent key is refused with forbidden, and a human with an admin key (or the dashboard) must do it.',
  ].join(' '),
  input: {
    key: flagKey,
    fromEnv: environment.describe('The source environment, whose config is copied.'),
    toEnv: environment.describe('The destination environment, whose config is replaced. prod is refused for agent keys.'),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run({ key, fromEnv, toEnv }, { scope }) {
    const flag = await scope.flag(key);
    try {
      const after = await scope.api.promote(flag.id, toEnv, fromEnv);
      return toolSuccess(`Promoted ${key} from ${fromEnv} to ${toEnv}.\n${environmentLine(toEnv, after.environments[toEnv])}`, {
        flag: after,
      });
    } catch (err) {
      return toolError(err, {
        forbidden: `Promoting into ${toEnv} needs a human: someone with an admin key or a dashboard session must promote ${key} from ${fromEnv} to ${toEnv}. Do not retry with this key; ask a human.`,
      });
    }
  },
});
