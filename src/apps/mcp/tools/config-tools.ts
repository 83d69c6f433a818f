import { z } from 'zod';
import { escapedControls } from '../../../foundations/validation/one-line.js';
import type { ConfigUpdateBody, RolloutPlanBody } from '../api-types.js';
import { ApiError } from '../control-plane-client.js';
import { defineTool, toolError, toolSuccess } from './define-tool.js';
import { configNotes, environmentLine, guardWords } from './flag-text.js';
import { environment, expectedVersion, flagKey, jsonValue, rolloutPct, rules } from './inputs.js';

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
    return toolSuccess(
      [
        `Set the rollout of ${key} in ${env} to ${rolloutPct}%.`,
        environmentLine(env, after.environments[env]),
        ...configNotes(after, env),
      ].join('\n'),
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
    const update: ConfigUpdateBody = {};
    for (const field of CONFIG_FIELDS) {
      if (args[field] !== undefined) (update as Record<string, unknown>)[field] = args[field];
    }
    if (Object.keys(update).length === 0) {
      throw new ApiError('invalid_input', `nothing to change: give at least one of ${CONFIG_FIELDS.join(', ')}`);
    }
    if (args.expectedVersion !== undefined) update.expectedVersion = args.expectedVersion;
    const flag = await scope.flag(args.key);
    const after = await scope.api.updateConfig(flag.id, args.env, update);
    const changed = Object.keys(update).filter((f) => f !== 'expectedVersion');
    const summary = [
      `Updated ${changed.join(', ')} of ${args.key} in ${args.env}.`,
      environmentLine(args.env, after.environments[args.env]),
      ...configNotes(after, args.env),
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
    'Promoting into prod is a deploy: an agent key is refused with forbidden, and a human with an admin key (or the dashboard) must do it; where the project requires approval of agent changes in the destination, the promotion is kept as a proposal for such a human to approve instead.',
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
      const summary = [
        `Promoted ${key} from ${fromEnv} to ${toEnv}.`,
        environmentLine(toEnv, after.environments[toEnv]),
        ...configNotes(after, toEnv),
      ];
      return toolSuccess(summary.join('\n'), { flag: after });
    } catch (err) {
      return toolError(err, {
        forbidden: `Promoting into ${toEnv} needs a human: someone with an admin key or a dashboard session must promote ${key} from ${fromEnv} to ${toEnv}. Do not retry with this key; ask a human.`,
      });
    }
  },
});

export const scheduleRollout = defineTool({
  name: 'schedule_rollout',
  title: 'Schedule a progressive rollout',
  description: [
    'Writes a progressive rollout of a flag in one environment as a schedule: startPct now (the flag is enabled at startPct at once), then stepPct more every `every` until maxPct (default 100).',
    '"5 % now, then +20 % every hour to 100 %" is { startPct: 5, stepPct: 20, every: "1h" }: 5 now, then 25, 45, 65, 85, 100.',
    'The service applies each later step when it falls due, one commit each (audit action scheduled_change, actor scheduler); a step due while the flag is killed there is skipped.',
    'The plan replaces any schedule the environment had; at most 50 steps. Give startAt (a future UTC time) to start later instead of now.',
    "Give guard { query, max?, min?, intervalSeconds? } (a PromQL query against the service's Prometheus) to watch the rollout: every step carries it; a value above max or below min, or 3 failed queries in a row, kills the flag in that environment and removes the remaining steps (audit action guard_failed).",
    'Pass expectedVersion (from get_flag) to guard against concurrent edits.',
  ].join(' '),
  input: {
    key: flagKey,
    env: environment,
    startPct: rolloutPct.describe('The first percentage, set now (or at startAt), 0 to 100.'),
    stepPct: z.number().gt(0).max(100).describe('Added at each step, above 0.'),
    every: z
      .string()
      .regex(/^[1-9][0-9]{0,6}(s|m|h|d)$/)
      .describe('Time between steps: a number and a unit, e.g. "30s", "15m", "1h", "2d".'),
    maxPct: rolloutPct.optional().describe('The last percentage (default 100).'),
    startAt: z
      .string()
      .optional()
      .describe('When to start, an ISO-8601 UTC time in the future such as "2026-11-24T09:00:00Z"; default now.'),
    guard: z
      .object({
        query: z
          .string()
          .min(1)
          .max(4096)
          .describe('A PromQL instant query, e.g. sum(rate(http_errors_total[5m])) / sum(rate(http_requests_total[5m])).'),
        max: z.number().optional().describe('The rollout stops when the value is above it.'),
        min: z.number().optional().describe('The rollout stops when the value is below it.'),
        intervalSeconds: z
          .number()
          .int()
          .min(1)
          .max(86_400)
          .optional()
          .describe('Seconds between checks while the rollout runs, 1 to 86400 (default 60).'),
      })
      .refine((g) => g.max !== undefined || g.min !== undefined, { message: 'give max, min or both' })
      .refine((g) => g.max === undefined || g.min === undefined || g.min <= g.max, { message: 'min must be at most max' })
      .optional()
      .describe('A metric that must hold while the rollout runs; give max, min or both.'),
    expectedVersion: expectedVersion.optional(),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run({ key, env, ...plan }, { scope }) {
    const flag = await scope.flag(key);
    const after = await scope.api.rolloutPlan(flag.id, env, plan as RolloutPlanBody);
    const state = after.environments[env];
    const steps = (state.schedule ?? []).map((step) =>
      escapedControls(
        `  ${step.at}: rollout ${step.set.rolloutPct}%${step.set.enabled ? ', enabled' : ''}${step.guard ? `, ${guardWords(step.guard)}` : ''}`,
      ),
    );
    const summary = [
      `Scheduled a progressive rollout of ${key} in ${env}: ${steps.length} step${steps.length === 1 ? '' : 's'} to come.`,
      environmentLine(env, state),
      ...steps,
      ...configNotes(after, env),
    ];
    return toolSuccess(summary.join('\n'), { flag: after });
  },
});
