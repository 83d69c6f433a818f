import { errorText } from '../api.js';
import { h, replace } from '../dom.js';
import { may } from '../permissions.js';
import type { Page, PageContext } from '../route.js';
import { type Decision, decideProposal } from './decide-proposal.js';
import { actorText, type Proposal, proposalDetails, proposalSubject, staleNotice } from './proposal-view.js';

/** What the last decision made on this page answered, per proposal: kept across redraws. */
interface Outcome {
  text: string;
  failed: boolean;
}

/**
 * `#/proposals`: the changes to protected environments that wait for a review (docs/proposals.md), each with
 * the change in words, its impact on users and who proposed it; Approve and Reject, each confirmed first.
 * Below them, the latest decided ones. A stale proposal (main changed what it changes since) says why and
 * offers only Reject. The list is re-read whenever main moves, so a proposal turns stale on screen before
 * anyone tries to approve it. A session cannot approve what it proposed itself: the server's 403 is shown
 * on the card.
 */
export function proposalsPage(ctx: PageContext): Page {
  const open = h('div', { class: 'proposal-list', 'data-testid': 'open-proposals' }, h('p', { class: 'muted' }, 'Loading…'));
  const decided = h('div', { class: 'proposal-list', 'data-testid': 'decided-proposals' });
  const outcomes = new Map<string, Outcome>();

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

  const decide = async (p: Proposal, verb: Decision) => {
    try {
      const after = await decideProposal(ctx.api, p, verb);
      if (!after) return;
      outcomes.set(p.id, { text: after.status === 'merged' ? 'Approved: the change is live.' : 'Rejected.', failed: false });
    } catch (err) {
      // Re-read too: a refusal such as a stale proposal's 409 changes what the card should offer.
      outcomes.set(p.id, { text: errorText(err), failed: true });
    }
    await load();
  };

  function card(p: Proposal): HTMLElement {
    const outcome = outcomes.get(p.id);
    const result = h('p', { class: outcome?.failed ? 'proposal-result form-error' : 'proposal-result', role: 'status' }, outcome?.text);
    const button = (verb: Decision, label: string, kind: string) =>
      h('button', { type: 'button', class: kind, onclick: () => void decide(p, verb) }, label);
    const decision =
      p.status === 'open'
        ? may(ctx, 'proposal.decide') &&
          h(
            'div',
            { class: 'proposal-actions' },
            p.stale ? null : button('approve', 'Approve', 'primary'),
            button('reject', 'Reject', p.stale ? 'primary' : 'secondary'),
          )
        : h(
            'p',
            { class: 'muted' },
            `${p.status} by ${p.decidedBy ? actorText(p.decidedBy) : '?'} at ${p.decidedAt ?? '?'}${p.rejectionReason ? ` — ${p.rejectionReason}` : ''}`,
          );
    return h(
      'article',
      { class: `proposal-card ${p.status}${p.stale ? ' stale' : ''}`, 'data-proposal': p.id },
      h('h2', null, `${p.action.replace('_', ' ')}: ${proposalSubject(p)}`),
      h('p', { class: 'muted' }, `Proposal ${p.id} by ${actorText(p.proposedBy)} at ${p.createdAt}`),
      staleNotice(p),
      proposalDetails(p),
      decision,
      result,
    );
  }

  const stop = ctx.live.follow(load);
  const element = h(
    'section',
    { class: 'page proposals-page' },
    h('h1', null, 'Proposals'),
    h('p', { class: 'muted' }, 'Changes to protected environments wait here until an admin or another person approves them.'),
    open,
    h('h2', null, 'Recently decided'),
    decided,
  );
  return { element, title: 'Proposals', dispose: stop };
}
