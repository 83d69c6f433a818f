import { environmentLine } from '../format/flag-text.js';
import { configNotes } from './config-notes.js';
import { defineTool } from './define-tool.js';
import { environment, expectedVersion, flagKey, rolloutPct } from './inputs.js';
import { toolSuccess } from './tool-result.js';

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
