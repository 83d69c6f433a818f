import { canonicalJson, ENVIRONMENTS } from '@flagops/core';
import { ApiError, errorText } from '../api.js';
import { h, replace } from '../dom.js';
import { filterFlags, killedEntries, sortFlags } from '../logic/flag-cells.js';
import { type FlagHealth, filterByHealth, HEALTH_LABELS, lifecycleOf, sortByStatus } from '../logic/health.js';
import { flagTypes, newLifecycle } from '../logic/lifecycle-form.js';
import { may } from '../permissions.js';
import { hrefOf, type Page, type PageContext } from '../route.js';
import type { FlagView, Project } from '../types.js';
import { learnKeyNames } from '../ui/actor-names.js';
import { budgetPanel } from '../ui/budget-panel.js';
import { envCellContent, killBanner } from '../ui/flag-state.js';
import { healthTag } from '../ui/health-badge.js';
import { invalidFileLine } from '../ui/invalid-files-banner.js';

function flagRow(flag: FlagView, health: FlagHealth | undefined): HTMLElement {
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
    h('td', { class: 'status-cell' }, healthTag(health)),
    h('td', { class: 'muted' }, flag.kind, lifecycleCell(flag)),
    ENVIRONMENTS.map((env) =>
      h(
        'td',
        { class: 'env-cell', 'data-env': env },
        h('a', { href: hrefOf({ name: 'flag', flagId: flag.id, env }) }, envCellContent(flag.environments[env])),
      ),
    ),
  );
}

/** The flag's type and owner under its kind, when it has lifecycle data. */
function lifecycleCell(flag: FlagView): HTMLElement | null {
  const lifecycle = (flag as FlagView & { lifecycle?: unknown }).lifecycle === undefined ? undefined : lifecycleOf(flag);
  if (!lifecycle) return null;
  return h('div', { class: 'muted lifecycle' }, lifecycle.owner ? `${lifecycle.type} · ${lifecycle.owner}` : lifecycle.type);
}

function select(label: string, name: string, options: Array<[string, string]>): HTMLSelectElement {
  return h(
    'select',
    { name, 'aria-label': label },
    options.map(([value, text]) => h('option', { value }, text)),
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
  const creating = h(
    'div',
    { class: 'new-flag' },
    may(ctx, 'flag.create') ? [h('h2', null, 'New flag'), createFlagForm(ctx, projectId)] : null,
  );
  const filter = h('input', { type: 'search', placeholder: 'Filter by key or name', 'aria-label': 'Filter flags' });
  const statusFilter = select('Filter by status', 'status', [
    ['', 'any status'],
    ...(Object.entries(HEALTH_LABELS) as Array<[string, string]>),
  ]);
  const typeFilter = select('Filter by type', 'type', [['', 'any type'], ...flagTypes.map((t): [string, string] => [t, t])]);
  const ownerFilter = h('input', { type: 'search', name: 'owner', placeholder: 'Owner', 'aria-label': 'Filter by owner' });
  // Sorted by key, or by status (stale first) once the Status header is clicked; clicked again, by key.
  let byStatus = false;
  const statusSort = h('button', { type: 'button', class: 'sort', 'aria-label': 'Sort by status' }, 'Status');
  let flags: FlagView[] = [];
  let health = new Map<string, FlagHealth>();
  let shown = '';

  const render = (force = false) => {
    const filters = { status: statusFilter.value, type: typeFilter.value, owner: ownerFilter.value };
    const kept = filterByHealth(filterFlags(flags, filter.value), health, filters);
    const visible = byStatus ? sortByStatus(kept, health) : sortFlags(kept);
    statusSort.textContent = byStatus ? 'Status ▲' : 'Status';
    statusSort.setAttribute('aria-pressed', String(byStatus));
    // Re-drawn only when something changed (or a minute passed, for the banner's "3 min ago"), so hovering
    // and selecting text survive the polling.
    const statuses = visible.map((f) => health.get(f.key) ?? null);
    const fingerprint = canonicalJson({
      visible,
      statuses,
      filter: filter.value,
      filters,
      byStatus,
      minute: Math.floor(Date.now() / 60_000),
    } as never);
    if (!force && fingerprint === shown) return;
    shown = fingerprint;
    replace(banner, killBanner(killedEntries(flags), Date.now(), true));
    replace(
      body,
      visible.map((f) => flagRow(f, health.get(f.key))),
    );
    status.textContent =
      flags.length === 0
        ? may(ctx, 'flag.create')
          ? 'No flags yet. Create the first one below.'
          : 'No flags yet.'
        : visible.length === 0
          ? 'No flag matches the filter.'
          : '';
  };
  filter.addEventListener('input', () => render());
  for (const control of [statusFilter, typeFilter]) control.addEventListener('change', () => render());
  ownerFilter.addEventListener('input', () => render());
  statusSort.addEventListener('click', () => {
    byStatus = !byStatus;
    render();
  });

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
      const base = `/api/v1/projects/${encodeURIComponent(projectId)}/flags`;
      // Health is a help, not a must: the list shows without it when it cannot be read.
      const [list, statuses] = await Promise.all([
        ctx.api.get<{ flags: FlagView[] }>(base),
        ctx.api.get<{ flags: FlagHealth[] }>(`${base}/health`).catch(() => ({ flags: [] as FlagHealth[] })),
      ]);
      flags = list.flags;
      health = new Map(statuses.flags.map((f) => [f.key, f]));
      await learnKeyNames(ctx.api, flags);
      if (failed) render(true);
      failed = false;
      render();
    } catch (err) {
      failed = true;
      status.textContent = errorText(err);
      // A project this role cannot see (or that is gone): nothing to create flags in.
      if (err instanceof ApiError && err.status === 404) creating.replaceChildren();
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
      statusFilter,
      typeFilter,
      ownerFilter,
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
          h('th', { 'aria-sort': 'none' }, statusSort),
          h('th', null, 'Kind'),
          ENVIRONMENTS.map((env) => h('th', null, env)),
        ),
      ),
      body,
    ),
    status,
    budgets.element,
    creating,
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
