import { environmentLine } from '../format/flag-text.js';
import { defineTool } from './define-tool.js';
import { environment, expectedVersion, flagKey } from './inputs.js';
import { toolSuccess } from './tool-result.js';

export const clearKill = defineTool({
  name: 'clear_kill',
  title: 'Clear the kill of a flag in one environment',
  description: [
    'Lifts a kill: the flag serves its normal config (enabled, rolloutPct, rules) again in that environment, immediately and audited.',
    'Nothing else changes, so first read the flag with get_flag and make sure the config underneath is safe to serve.',
    'Pass expectedVersion (the version you read) so that the clear fails with version_conflict if the config changed meanwhile;',
    'on version_conflict re-read the flag and decide again.',
  ].join(' '),
  input: { key: flagKey, env: environment, expectedVersion: expectedVersion.optional() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ key, env, expectedVersion }, { scope }) {
    const flag = await scope.flag(key);
    const wasKilled = flag.environments[env].killed;
    const after = await scope.api.updateConfig(flag.id, env, { clearKill: true, expectedVersion });
    const headline = wasKilled
      ? `Cleared the kill of ${key} in ${env}; its config serves again.`
      : `${key} was not killed in ${env}; nothing changed.`;
    return toolSuccess(`${headline}\n${environmentLine(env, after.environments[env])}`, { flag: after });
  },
});
