import { budgetWords } from '../../../../src/features/budgets/budget-rules.js';
import { describeImpact } from '../../../../src/features/proposals/impact.js';
import type { Proposal } from '../../../../src/features/proposals/proposal-reader.js';
import { type Child, h } from '../dom.js';

export type { Proposal } from '../../../../src/features/proposals/proposal-reader.js';

/** "agent svc_agt_3kq9x2ab (deploy-bot)": who proposed or decided, as the audit trail names actors. */
export function actorText(actor: Proposal['proposedBy']): string {
  const name = actor.name && actor.name !== actor.keyPrefix ? actor.name : undefined;
  return [actor.type, actor.keyPrefix, name && (actor.keyPrefix ? `(${name})` : name)].filter(Boolean).join(' ');
}

/** The environment a proposal acts in; an archive (no environment) acts in all of them. */
export function proposalEnvironment(p: Pick<Proposal, 'environment'>): string {
  return p.environment ?? 'every environment';
}

/** Where a proposal acts: a flag in an environment (or in all, for an archive), or a segment of a project. */
export function proposalSubject(p: Proposal): string {
  if (p.flagKey)
    return `${p.projectSlug}/${p.flagKey} in ${proposalEnvironment(p)}${p.fromEnvironment ? ` (from ${p.fromEnvironment})` : ''}`;
  return `segment ${p.segmentKey} of ${p.projectSlug}`;
}

/**
 * Why a stale proposal cannot be approved, in words (what changed on main since it was made) and what to do
 * instead; null for one that is not stale.
 */
export function staleNotice(p: Proposal): HTMLElement | null {
  if (!p.stale) return null;
  return h(
    'p',
    { class: 'stale-notice', role: 'status' },
    h('strong', null, 'Stale: '),
    p.staleReason ?? 'main changed what it changes since it was made',
    '. It cannot be approved: reject it, and propose the change again on what is live now if it is still wanted.',
  );
}

/** The change in words and its impact on users, one line each; for a stale one, as it was proposed. */
export function proposalDetails(p: Proposal): Child {
  return h(
    'div',
    { class: 'proposal-details' },
    p.budget
      ? h(
          'p',
          { class: 'budget-notice' },
          h('strong', null, p.status === 'open' ? 'Waits for budget: ' : 'Was kept for budget: '),
          budgetWords(p.budget),
          '.',
        )
      : null,
    p.stale ? h('p', { class: 'muted' }, 'As proposed, against the config of that time:') : null,
    h('ul', { class: 'proposal-changes' }, ...p.changes.map((c) => h('li', null, c))),
    p.impact.length === 0
      ? h('p', { class: 'muted' }, 'No environment config changes: no users move.')
      : h(
          'ul',
          { class: 'proposal-impact' },
          ...p.impact.map((i) => h('li', { class: i.exact ? 'exact' : 'inexact' }, `${i.flagKey} ${describeImpact(i)}`)),
        ),
  );
}
