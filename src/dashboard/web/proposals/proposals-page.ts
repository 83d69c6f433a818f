import { errorText } from '../api.js';
import { h, replace } from '../dom.js';
import type { Page, PageContext } from '../route.js';
import { confirmDialog } from '../ui/confirm-dialog.js';
import { actorText, type Proposal, proposalDetails, proposalSubject } from './proposal-view.js';

/**
 * `#/proposals`: the changes to protected environments that wait for a review (docs/proposals.md), each with
 * the change in words, its impact on users and who proposed it; Approve and Reject, each confirmed first.
 * Below them, the latest decided ones. A session cannot approve what it proposed itself: the server's 403
 * is shown on the card.
 */
export function proposalsPage(ctx: PageContext): Page {
  const open = h('div', { class: 'proposal-list', 'data-testid': 'open-proposals' }, h('p', { class: 'muted' }, 'Loading…'));
  const decided = h('div', { class: 'proposal-list', 'data-testid': 'decided-proposals' });

  const load = async () => {
    try {
      const { proposals } = await ctx.api.get<{ proposals: Proposal[] }>('/api/v1/proposals');
      const waiting = proposals.filter((p) => p.status === 'open');
      replace(open, waiting.length === 0 ? h('p', { class: 'muted' }, 'No proposals wait for a review.') : waiting.map(card));
      replace(
        decided,
        proposals
          .filter((p) => p.status !== 'open')
          .slice(0, 20)
          .map(card),
      );
    } catch (err) {
      replace(open, h('p', { class: 'form-error', role: 'alert' }, errorText(err)));
    }
  };

  function card(p: Proposal): HTMLElement {
    const result = h('p', { class: 'proposal-result', role: 'status' });
    const decide = async (verb: 'approve' | 'reject') => {
      const answer = await confirmDialog({
        title: `${verb === 'approve' ? 'Approve' : 'Reject'} proposal ${p.id}?`,
        body: h('div', null, h('p', null, proposalSubject(p)), proposalDetails(p)),
        confirmLabel: verb === 'approve' ? 'Approve' : 'Reject',
        danger: verb === 'reject',
        input: verb === 'reject' ? { label: 'Reason (optional)' } : undefined,
      });
      if (!answer.confirmed) return;
      try {
        const body = verb === 'reject' && answer.text !== '' ? { reason: answer.text } : undefined;
        const after = await ctx.api.send<Proposal>('POST', `/api/v1/proposals/${encodeURIComponent(p.id)}/${verb}`, body);
        await load();
        const shown = open.querySelector(`[data-proposal="${p.id}"]`) ?? decided.querySelector(`[data-proposal="${p.id}"]`);
        shown
          ?.querySelector('.proposal-result')
          ?.replaceChildren(`${after.status === 'merged' ? 'Approved: the change is live.' : 'Rejected.'}`);
      } catch (err) {
        result.classList.add('form-error');
        result.textContent = errorText(err);
      }
    };
    const decision =
      p.status === 'open'
        ? h(
            'div',
            { class: 'proposal-actions' },
            h('button', { type: 'button', class: 'primary', onclick: () => void decide('approve') }, 'Approve'),
            h('button', { type: 'button', class: 'secondary', onclick: () => void decide('reject') }, 'Reject'),
          )
        : h(
            'p',
            { class: 'muted' },
            `${p.status} by ${p.decidedBy ? actorText(p.decidedBy) : '?'} at ${p.decidedAt ?? '?'}${p.reason ? ` — ${p.reason}` : ''}`,
          );
    return h(
      'article',
      { class: `proposal-card ${p.status}`, 'data-proposal': p.id },
      h('h2', null, `${p.action.replace('_', ' ')}: ${proposalSubject(p)}`),
      h('p', { class: 'muted' }, `Proposal ${p.id} by ${actorText(p.proposedBy)} at ${p.createdAt}`),
      proposalDetails(p),
      decision,
      result,
    );
  }

  void load();
  const element = h(
    'section',
    { class: 'page proposals-page' },
    h('h1', null, 'Proposals'),
    h('p', { class: 'muted' }, 'Changes to protected environments wait here until an admin or another person approves them.'),
    open,
    h('h2', null, 'Recently decided'),
    decided,
  );
  return { element, title: 'Proposals' };
}
