import type { Api } from '../api.js';
import { h, replace } from '../dom.js';
import { hrefOf } from '../route.js';
import type { FlagView } from '../types.js';
import { actorText, type Proposal, proposalDetails } from './proposal-view.js';

/**
 * On a flag's page: the open proposals for that flag (a change waiting for a review), with a link to the
 * Proposals page where it is decided. Empty when there is none.
 */
export function pendingProposal(api: Api, flag: FlagView): HTMLElement {
  const element = h('div', { class: 'pending-proposals', 'data-testid': 'pending-proposals' });
  const query = new URLSearchParams({ status: 'open', projectId: flag.projectId });
  api.get<{ proposals: Proposal[] }>(`/api/v1/proposals?${query}`).then(
    ({ proposals }) => {
      const mine = proposals.filter((p) => p.flagKey === flag.key);
      replace(
        element,
        mine.map((p) =>
          h(
            'div',
            { class: 'notice pending-proposal' },
            h('strong', null, `Pending proposal for ${p.environment}`),
            ` by ${actorText(p.proposedBy)} — `,
            h('a', { href: hrefOf({ name: 'proposals' }) }, 'review it'),
            proposalDetails(p),
          ),
        ),
      );
    },
    () => replace(element),
  );
  return element;
}
