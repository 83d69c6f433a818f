import type { Api } from '../api.js';
import { h } from '../dom.js';
import { confirmDialog } from '../ui/confirm-dialog.js';
import { type Proposal, proposalDetails, proposalSubject, staleNotice } from './proposal-view.js';

export type Decision = 'approve' | 'reject';

/**
 * Approve or reject a proposal after a confirmation that shows it again (a rejection may give a reason).
 * The decided proposal, or null when the person cancelled; an API failure is thrown for the caller to show.
 */
export async function decideProposal(api: Api, p: Proposal, verb: Decision): Promise<Proposal | null> {
  const answer = await confirmDialog({
    title: `${verb === 'approve' ? 'Approve' : 'Reject'} proposal ${p.id}?`,
    body: h('div', null, h('p', null, proposalSubject(p)), staleNotice(p), proposalDetails(p)),
    confirmLabel: verb === 'approve' ? 'Approve' : 'Reject',
    danger: verb === 'reject',
    input: verb === 'reject' ? { label: 'Reason (optional)' } : undefined,
  });
  if (!answer.confirmed) return null;
  const body = verb === 'reject' && answer.text !== '' ? { reason: answer.text } : undefined;
  return api.send<Proposal>('POST', `/api/v1/proposals/${encodeURIComponent(p.id)}/${verb}`, body);
}
