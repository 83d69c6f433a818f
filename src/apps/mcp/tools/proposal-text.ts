import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { budgetWords } from '../../../features/budgets/budget-rules.js';
import { describeImpact } from '../../../features/proposals/impact.js';
import { escapedControls } from '../../../foundations/validation/one-line.js';
import type { ProposalResponse } from '../api-types.js';

/** Who may approve a proposal: said in every answer that reports one, so an agent knows whom to ask. */
export const APPROVERS_TEXT = 'an admin key or a dashboard session (not the key that proposed it)';

function actorText(actor: ProposalResponse['proposedBy']): string {
  return [actor.type, actor.keyPrefix, actor.name && actor.name !== actor.keyPrefix ? `(${actor.name})` : undefined]
    .filter(Boolean)
    .join(' ');
}

/**
 * A proposal in a few lines: what, where, its state, the change in words and its impact. A stale one says why
 * and what to do instead, so an agent does not wait for an approval that cannot come. Free text (a rejection's
 * reason) is shown with its line breaks escaped, so it cannot show a line of its own.
 */
export function proposalLines(p: ProposalResponse): string[] {
  const where = p.flagKey
    ? `${p.flagKey} ${p.environment ? `in ${p.environment}` : 'in every environment'}`
    : `segment ${p.segmentKey} of ${p.projectSlug}`;
  const state =
    p.status !== 'open'
      ? `${p.status} by ${p.decidedBy ? actorText(p.decidedBy) : 'someone'}${p.rejectionReason ? ` — reason: ${p.rejectionReason}` : ''}`
      : p.stale
        ? `open but STALE: ${p.staleReason ?? 'main changed what it changes since it was made'}. It cannot be approved: ${APPROVERS_TEXT} can only reject it; if the change is still wanted, make it again (a new proposal on what main holds now)`
        : `open, waiting for ${APPROVERS_TEXT}`;
  const lines = [
    `Proposal ${p.id}: ${p.action} of ${where} by ${actorText(p.proposedBy)}, ${p.createdAt}; ${state}.`,
    ...(p.budget ? [`  waits for budget: ${budgetWords(p.budget)}`] : []),
    ...p.changes.map((c) => `  change: ${c}`),
    ...p.impact.map((i) => `  impact: ${i.flagKey} ${describeImpact(i)}`),
  ];
  return lines.map(escapedControls);
}

/**
 * What a write tool answers when the control plane kept its change as a proposal instead of applying it:
 * not an error (nothing is wrong, and retrying would only open another proposal), but not applied either.
 */
export function proposalOpenedResult(proposal: ProposalResponse): CallToolResult {
  const why = proposal.budget
    ? `it would take this project's hourly budget past its limit (${budgetWords(proposal.budget)})`
    : `${proposal.environment ?? 'this project'} requires approval for changes by this agent key`;
  const text = [
    `NOT APPLIED YET: ${why}, so the change was kept as proposal ${proposal.id} (branch proposals/${proposal.id}).`,
    `It takes effect only once ${APPROVERS_TEXT} approves it (dashboard Proposals page, or POST /api/v1/proposals/${proposal.id}/approve). Do not retry: that would open another proposal. Follow it with list_proposals.`,
    ...proposalLines(proposal),
  ].join('\n');
  const data = { proposal, applied: false, approvers: APPROVERS_TEXT, reason: proposal.budget ? 'budget' : 'approval' };
  return {
    content: [
      { type: 'text', text },
      { type: 'text', text: JSON.stringify(data) },
    ],
    structuredContent: data,
  };
}
