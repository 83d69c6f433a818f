import { type Api, errorText } from '../api.js';
import { h, replace } from '../dom.js';
import { hrefOf } from '../route.js';
import type { FlagView } from '../types.js';
import { decideProposal } from './decide-proposal.js';
import { actorText, type Proposal, proposalDetails, proposalEnvironment, staleNotice } from './proposal-view.js';

export interface PendingProposal {
  element: HTMLElement;
  /** The flag moved (an edit, a push, an approval): read its open proposals again, one may have turned stale. */
  update(flag: FlagView): void;
}

/**
 * On a flag's page: the open proposals for that flag (a change waiting for a review), with a link to the
 * Proposals page where it is decided. A stale one says why it cannot be approved and can be rejected here.
 * Empty when there is none.
 */
export function pendingProposal(api: Api, initial: FlagView, mayDecide = true): PendingProposal {
  const element = h('div', { class: 'pending-proposals', 'data-testid': 'pending-proposals' });
  let flag = initial;
  let failure: { id: string; text: string } | null = null;

  let reads = 0;

  const load = () => {
    const query = new URLSearchParams({ status: 'open', projectId: flag.projectId });
    // Only the latest read is drawn: an earlier one may answer last.
    const read = ++reads;
    api.get<{ proposals: Proposal[] }>(`/api/v1/proposals?${query}`).then(
      ({ proposals }) => {
        if (read === reads) replace(element, proposals.filter((p) => p.flagKey === flag.key).map(notice));
      },
      () => {
        if (read === reads) replace(element);
      },
    );
  };

  const reject = async (p: Proposal) => {
    failure = null;
    try {
      await decideProposal(api, p, 'reject');
    } catch (err) {
      failure = { id: p.id, text: errorText(err) };
    }
    load();
  };

  function notice(p: Proposal): HTMLElement {
    return h(
      'div',
      { class: p.stale ? 'notice pending-proposal stale' : 'notice pending-proposal', 'data-proposal': p.id },
      h('strong', null, `${p.stale ? 'Stale proposal' : 'Pending proposal'} for ${proposalEnvironment(p)}`),
      ` by ${actorText(p.proposedBy)} — `,
      h('a', { href: hrefOf({ name: 'proposals' }) }, p.stale ? 'Proposals page' : 'review it'),
      staleNotice(p),
      p.stale && mayDecide ? h('button', { type: 'button', class: 'secondary small', onclick: () => void reject(p) }, 'Reject') : null,
      failure?.id === p.id ? h('p', { class: 'form-error', role: 'alert' }, failure.text) : null,
      proposalDetails(p),
    );
  }

  load();
  return {
    element,
    update(fresh) {
      flag = fresh;
      load();
    },
  };
}
