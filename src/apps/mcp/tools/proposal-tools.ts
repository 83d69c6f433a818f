import { z } from 'zod';
import { budgetWords } from '../../../features/budgets/budget-rules.js';
import { describeImpact } from '../../../features/proposals/impact.js';
import { escapedControls } from '../../../foundations/validation/one-line.js';
import type { ConfigUpdateBody } from '../api-types.js';
import { ApiError } from '../control-plane-client.js';
import { defineTool, toolSuccess } from './define-tool.js';
import { environment, flagKey, jsonValue, rolloutPct, rules } from './inputs.js';
import { APPROVERS_TEXT, proposalLines } from './proposal-text.js';

export const listProposals = defineTool({
  name: 'list_proposals',
  title: 'List change proposals',
  description: [
    'Lists the change proposals of the project, newest first: changes to protected environments (project.yaml requireApproval) that wait for approval, and those already merged or rejected.',
    'Each says what it changes in words and its impact (the share of users whose served variation moves).',
    'An open one marked STALE was overtaken by a change on main (the reason says which): it cannot be approved; make the change again if it is still wanted.',
    `Read-only. Only ${APPROVERS_TEXT} can approve or reject; an agent cannot.`,
  ].join(' '),
  input: {
    status: z.enum(['open', 'merged', 'rejected']).optional().describe('Only proposals in this state (default: open).'),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ status }, { scope }) {
    const wanted = status ?? 'open';
    const { proposals } = await scope.api.listProposals({ status: wanted, projectId: await scope.projectId() });
    const lines = [proposals.length === 0 ? `No ${wanted} proposals.` : `${proposals.length} ${wanted} proposal(s), newest first:`];
    for (const p of proposals) lines.push(...proposalLines(p));
    return toolSuccess(lines.join('\n'), { proposals });
  },
});

export const previewChange = defineTool({
  name: 'preview_change',
  title: 'Preview a change and its impact',
  description: [
    'Shows what a config update (any of enabled, rolloutPct, rules, valueOn, valueOff) or a promotion (fromEnv) would do to a flag in one environment, WITHOUT making it:',
    'the change in words, the share of users whose served variation would move and between which variations (exact over the bucket space unless rules, segments or prerequisites change), and whether it would need approval (become a proposal).',
    'Nothing is written. Call it before set_rollout, update_flag_config or promote_flag to check the effect.',
  ].join(' '),
  input: {
    key: flagKey,
    env: environment.describe('The environment the change would be made in (the destination of a promotion).'),
    fromEnv: environment.optional().describe('Preview promoting the config of this environment into env instead of a config update.'),
    enabled: z.boolean().optional(),
    rolloutPct: rolloutPct.optional(),
    rules: rules.optional(),
    valueOn: jsonValue.optional(),
    valueOff: jsonValue.optional(),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ key, env, fromEnv, ...fields }, { scope }) {
    const config: ConfigUpdateBody = {};
    for (const [field, value] of Object.entries(fields)) if (value !== undefined) (config as Record<string, unknown>)[field] = value;
    if (fromEnv !== undefined && Object.keys(config).length > 0)
      throw new ApiError('invalid_input', 'give either fromEnv (a promotion) or config fields (a config update), not both');
    if (fromEnv === undefined && Object.keys(config).length === 0)
      throw new ApiError(
        'invalid_input',
        'nothing to preview: give fromEnv or at least one of enabled, rolloutPct, rules, valueOn, valueOff',
      );
    const flag = await scope.flag(key);
    const preview = await scope.api.previewChange(flag.id, env, fromEnv === undefined ? { config } : { fromEnv });
    const lines = [
      preview.changes.length === 0
        ? `This would change nothing of ${key} in ${env}.`
        : `Preview (nothing was changed) of ${key} in ${env}:`,
      ...preview.changes.map((c) => escapedControls(`  change: ${c}`)),
      ...preview.impact.map((i) => `  impact: ${describeImpact(i)}`),
    ];
    const budget = preview.budget;
    if (budget && preview.changes.length > 0)
      lines.push(
        budget.waits
          ? `Making it would open a proposal, for ${APPROVERS_TEXT} to approve: ${budgetWords(budget)}.`
          : `Within budget: ${budget.actorType} changes to ${env} moved ${budget.usedPct.toFixed(2)} % of users in the last ${budget.windowMinutes} minutes; this change adds ${budget.addsPct.toFixed(2)} % of the ${budget.movedPctPerHour} % an hour.`,
      );
    else if (preview.requiresApproval && preview.changes.length > 0)
      lines.push(`Making it would open a proposal: ${env} requires approval of this key's changes, by ${APPROVERS_TEXT}.`);
    return toolSuccess(lines.join('\n'), { preview });
  },
});
