import { canonicalJson, ENVIRONMENTS } from '@flagops/core';
import { errorText } from '../api.js';
import { h, replace } from '../dom.js';
import { filterFlags, killedEntries, sortFlags } from '../logic/flag-cells.js';
import { flagTypes, newLifecycle } from '../logic/lifecycle-form.js';
import { may } from '../permissions.js';
import { hrefOf, type Page, type PageContext } from '../route.js';
import type { FlagView, Project } from '../types.js';
import { learnKeyNames } from '../ui/actor-names.js';
import { budgetPanel } from '../ui/budget-panel.js';
import { envCellContent, killBanner } from '../ui/flag-state.js';
import { invalidFileLine } from '../ui/invalid-files-banner.js';

function flagRow(flag: FlagView): HTMLElement {
  const killed = ENVIRONMENTS.some((env) => flag.environments[env].killed);
  const held = flag.invalidFiles !== undefined && flag.invalidFiles.length > 0;
  const classes = ['flag-row', flag.archivedAt ? 'archived' : '', killed ? 'has-kill' : '', held ? 'held-back' : '']
    .filter(Boolean)
    .join(' ');
  return h(
    'tr',
    { class: classes, 'data-flag': flag.key },
    h(
      'td',
      null,
      h('a', { href: hrefOf({ name: 'flag', flagId: flag.id, env: 'prod' }), class: 'flag-key' }, flag.key),
      flag.name !== flag.key ? h('div', { class: 'muted' }, flag.name) : null,
      flag.archivedAt ? h('span', { class: 'tag' }, 'archived') : null,
      held ? h('span', { class: 'tag held', title: flag.invalidFiles!.map(invalidFileLine).join('\n') }, 'held back') : null,
    ),
    h('td', { class: 'muted' }, flag.kind),
    ENVIRONMENTS.map((env) =>
      h(
        'td',
        { class: 'env-cell', 'data-env': env },
        h('a', { href: hrefOf({ name: 'flag', flagId: flag.id, env }) }, envCellContent(flag.environments[env])),
      ),
    ),
  );
}

function createFlagForm(ctx: PageContext, projectId: string): HTMLElement {
  const key = h('input', { name: 'key', required: true, placeholder: 'checkout-v2', pattern: '[A-Za-z0-9][A-Za-z0-9._-]{0,127}' });
  const name = h('input', { name: 'name', placeholder: 'Checkout v2' });
  const kind = h(
    'select',
    { name: 'kind' },
    ['boolean', 'string', 'number', 'json'].map((k) => h('option', { value: k }, k)),
  );
  // The lifecycle is optional: left empty, the flag has none.
  const type = h(
    'select',
    { name: 'lifecycleType' },
    h('option', { value: '' }, '—'),
    flagTypes.map((t) => h('option', { value: t }, t)),
  );
  const owner = h('input', { name: 'owner', placeholder: 'team-checkout' });
  const expiresAt = h('input', { name: 'expiresAt', placeholder: '2027-03-31' });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const form = h(
    'form',
    { class: 'inline-form', 'aria-label': 'Create a flag' },
    h('label', null, 'Key', key),
    h('label', null, 'Name', name),
    h('label', null, 'Kind', kind),
    h('label', null, 'Type', type),
    h('label', null, 'Owner', owner),
    h('label', null, 'Expires', expiresAt),
    h('button', { type: 'submit', class: 'primary' }, 'Create flag'),
    error,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    try {
      const body: Record<string, unknown> = { key: key.value, kind: kind.value };
      if (name.value.trim() !== '') body.name = name.value.trim();
      const lifecycle = newLifecycle({ type: type.value, owner: owner.value, expiresAt: expiresAt.value });
      if (lifecycle) body.lifecycle = lifecycle;
      const flag = await ctx.api.send<FlagView>('POST', `/api/v1/projects/${encodeURIComponent(projectId)}/flags`, body);
      ctx.navigate({ name: 'flag', flagId: flag.id, env: 'dev' });
    } catch (err) {
      error.textContent = errorText(err);
    }
  });
  return form;
}

/** A project's flags, one column per environment, re-read whenever the organisation's state moves. */
export function flagsPage(ctx: PageContext, projectId: string): Page {
  const heading = h('h1', null, 'Flags');
  const banner = h('div', { class: 'banner-slot' });
  const body = h('tbody');
  const status = h('p', { class: 'muted' }, 'Loading…');
  const filter = h('input', { type: 'search', placeholder: 'Filter by key or name', 'aria-label': 'Filter flags' });
  let flags: FlagView[] = [];
  let shown = '';

  const render = (force = false) => {
    const visible = sortFlags(filterFlags(flags, filter.value));
    // Re-drawn only when something changed (or a minute passed, for the banner's "3 min ago"), so hovering
    // and selecting text survive the polling.
    const fingerprint = canonicalJson({ visible, filter: filter.value, minute: Math.floor(Date.now() / 60_000) });
    if (!force && fingerprint === shown) return;
    shown = fingerprint;
    replace(banner, killBanner(killedEntries(flags.filter((f) => !f.archivedAt)), Date.now(), true));
    replace(body, visible.map(flagRow));
    status.textContent =
      flags.length === 0 ? 'No flags yet. Create the first one below.' : visible.length === 0 ? 'No flag matches the filter.' : '';
  };
  filter.addEventListener('input', () => render());

  ctx.api.get<{ projects: Project[] }>('/api/v1/projects').then(
    ({ projects }) => {
      const project = projects.find((p) => p.id === projectId);
      if (project) heading.textContent = `${project.name} — flags`;
    },
    () => undefined,
  );

  let failed = false;
  const stop = ctx.live.follow(async () => {
    try {
      flags = (await ctx.api.get<{ flags: FlagView[] }>(`/api/v1/projects/${encodeURIComponent(projectId)}/flags`)).flags;
      await learnKeyNames(ctx.api, flags);
      if (failed) render(true);
      failed = false;
      render();
    } catch (err) {
      failed = true;
      status.textContent = errorText(err);
      throw err;
    }
  });

  const budgets = budgetPanel(ctx, projectId);
  const element = h(
    'section',
    { class: 'page' },
    h('p', { class: 'crumbs' }, h('a', { href: hrefOf({ name: 'projects' }) }, 'Projects')),
    heading,
    banner,
    h(
      'div',
      { class: 'toolbar' },
      filter,
      h('a', { href: hrefOf({ name: 'audit', filters: { projectId } }) }, 'Audit log of this project'),
      h('a', { href: hrefOf({ name: 'segments', projectId }) }, 'Segments'),
    ),
    h(
      'table',
      { class: 'grid flags-table' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', null, 'Flag'),
          h('th', null, 'Kind'),
          ENVIRONMENTS.map((env) => h('th', null, env)),
        ),
      ),
      body,
    ),
    status,
    budgets.element,
    h('h2', null, 'New flag'),
    may(ctx, 'flag.create') ? createFlagForm(ctx, projectId) : null,
  );
  return {
    element,
    title: 'Flags',
    dispose: () => {
      stop();
      budgets.dispose();
    },
  };
}
