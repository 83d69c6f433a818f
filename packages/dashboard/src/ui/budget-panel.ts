import { canonicalJson } from '@flagops/core';
import { errorText } from '../api.js';
import { h, replace } from '../dom.js';
import type { PageContext } from '../route.js';

/** GET /api/v1/projects/:id/budgets: one entry per environment and actor type a budget lists. */
interface BudgetUseView {
  environment: string;
  actorType: string;
  movedPctPerHour: number;
  usedPct: number;
  remainingPct: number;
  changes: Array<{ commit: string; at: string; flagKey: string; movedPct: number }>;
}

interface BudgetsAnswer {
  windowMinutes: number;
  budgets: BudgetUseView[];
}

function budgetRow(b: BudgetUseView): HTMLElement {
  const share = b.movedPctPerHour === 0 ? (b.usedPct > 0 ? 1 : 0) : Math.min(1, b.usedPct / b.movedPctPerHour);
  return h(
    'tr',
    { 'data-budget': `${b.environment}/${b.actorType}`, class: b.remainingPct <= 0 ? 'budget-spent' : '' },
    h('td', null, b.environment),
    h('td', null, b.actorType),
    h(
      'td',
      null,
      `${b.usedPct.toFixed(2)} % of ${b.movedPctPerHour} %`,
      // An approved proposal may take the use past the budget: said, not only drawn.
      b.usedPct > b.movedPctPerHour
        ? h('strong', { class: 'over-budget' }, ` — over by ${(b.usedPct - b.movedPctPerHour).toFixed(2)} %`)
        : null,
    ),
    h(
      'td',
      null,
      // Low is good: amber past half the budget, red near it and past it.
      h('meter', {
        min: 0,
        max: 1,
        low: 0.5,
        high: 0.9,
        optimum: 0,
        value: share,
        'aria-label': `${b.environment} ${b.actorType} budget used`,
      }),
    ),
    h(
      'td',
      { class: 'muted' },
      `${b.remainingPct.toFixed(2)} % left; ${b.changes.length} change${b.changes.length === 1 ? '' : 's'} counted`,
    ),
  );
}

/**
 * A project's budgets (project.yaml `budgets`): per environment and actor type, the share of users their
 * changes moved in the last hour against the budget. Nothing when the project has none. Re-read as the
 * organisation's state moves, and each minute, as changes leave the window.
 */
export function budgetPanel(ctx: PageContext, projectId: string): { element: HTMLElement; dispose: () => void } {
  const element = h('section', { class: 'budgets', 'data-testid': 'budgets', hidden: true });
  let shown = '';
  const render = (answer: BudgetsAnswer) => {
    const fingerprint = canonicalJson(answer as never);
    if (fingerprint === shown) return;
    shown = fingerprint;
    element.hidden = answer.budgets.length === 0;
    // Nothing at all without budgets: the page's other tables are the only ones there.
    if (answer.budgets.length === 0) {
      replace(element);
      return;
    }
    replace(
      element,
      h('h2', null, `Budgets (last ${answer.windowMinutes} minutes)`),
      h(
        'p',
        { class: 'muted' },
        'Config updates and promotions by these actor types wait for approval once they would move more users than the budget in an hour. Kills never wait.',
      ),
      h(
        'table',
        { class: 'grid budgets-table' },
        h(
          'thead',
          null,
          h('tr', null, h('th', null, 'Environment'), h('th', null, 'Actor'), h('th', null, 'Used'), h('th', null, ''), h('th', null, '')),
        ),
        h('tbody', null, ...answer.budgets.map(budgetRow)),
      ),
    );
  };
  const read = async () => {
    try {
      render(await ctx.api.get<BudgetsAnswer>(`/api/v1/projects/${encodeURIComponent(projectId)}/budgets`));
    } catch (err) {
      replace(element, h('p', { class: 'form-error' }, errorText(err)));
      throw err;
    }
  };
  const stop = ctx.live.follow(read);
  const timer = setInterval(() => void read().catch(() => undefined), 60_000);
  return {
    element,
    dispose: () => {
      clearInterval(timer);
      stop();
    },
  };
}
