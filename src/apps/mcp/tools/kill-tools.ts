import { z } from 'zod';
import { defineTool, toolSuccess } from './define-tool.js';
import { configNotes, environmentLine } from './flag-text.js';
import { environment, expectedVersion, flagKey } from './inputs.js';

export const killFlag = defineTool({
  name: 'kill_flag',
  title: 'Kill a flag in one environment',
  description: [
    'Emergency stop: the flag serves its valueOff to 100% of traffic in that environment, overriding enabled, rolloutPct and every rule.',
    'It takes effect immediately (the evaluation API serves it before this call returns; SDKs within seconds), with no approval step,',
    "and it is recorded in the audit trail under this agent key's prefix, with your reason. Use it when a feature misbehaves; always give a reason.",
    'The kill stays until clear_kill. Killing a flag that is already killed changes nothing.',
  ].join(' '),
  input: {
    key: flagKey,
    env: environment,
    reason: z
      .string()
      .max(4096)
      .optional()
      .describe('Why you kill it (e.g. "error rate 7% after deploy 1432"); goes into the audit trail.'),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ key, env, reason }, { scope }) {
    const flag = await scope.flag(key);
    const after = await scope.api.kill(flag.id, env, reason);
    const state = after.environments[env];
    const headline = after.alreadyKilled ? `${key} was already killed in ${env}; nothing changed.` : `Killed ${key} in ${env}.`;
    return toolSuccess(`${headline}\n${environmentLine(env, state)}`, { flag: after });
  },
});

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
    return toolSuccess([headline, environmentLine(env, after.environments[env]), ...configNotes(after, env)].join('\n'), { flag: after });
  },
});
