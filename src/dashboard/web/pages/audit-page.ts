import { AUDIT_ACTIONS, ENVIRONMENTS } from '@flagops/core';
import { errorText } from '../api.js';
import { h, replace } from '../dom.js';
import { localTime } from '../logic/text.js';
import { type AuditFilters, hrefOf, type Page, type PageContext } from '../route.js';
import type { AuditEntry, FlagView, Project } from '../types.js';

function select(name: string, label: string, options: Array<[string, string]>, value: string | undefined): HTMLSelectElement {
  const el = h(
    'select',
    { name, 'aria-label': label },
    h('option', { value: '' }, `any ${label}`),
    options.map(([v, text]) => h('option', { value: v }, text)),
  );
  el.value = value ?? '';
  return el;
}

function actorText(actor: AuditEntry['actor']): string {
  const who = actor.name ?? actor.keyPrefix ?? 'unknown';
  if (actor.type === 'scheduler') return 'the scheduler (a scheduled step)';
  const how =
    actor.type === 'session'
      ? 'dashboard'
      : actor.type === 'git'
        ? 'git push'
        : actor.type === 'trigger'
          ? 'trigger'
          : `${actor.type} key${actor.keyPrefix ? ` ${actor.keyPrefix}` : ''}`;
  return `${who} (${how})`;
}

function entryRow(entry: AuditEntry): HTMLElement {
  const flag =
    entry.projectSlug && entry.flagKey
      ? h(
          'a',
          { href: hrefOf({ name: 'flag-by-key', projectSlug: entry.projectSlug, key: entry.flagKey }) },
          `${entry.projectSlug}/${entry.flagKey}`,
        )
      : (entry.projectSlug ?? '—');
  const where = entry.environment ? (entry.fromEnvironment ? `${entry.fromEnvironment} → ${entry.environment}` : entry.environment) : '—';
  return h(
    'tr',
    { class: `audit-row action-${entry.action}`, 'data-action': entry.action },
    h('td', { class: 'nowrap', title: entry.at }, localTime(entry.at)),
    h('td', null, h('span', { class: `tag action-tag action-${entry.action}` }, entry.action)),
    h('td', null, flag),
    h('td', null, where),
    h('td', { class: 'actor' }, actorText(entry.actor)),
    h('td', { class: 'muted' }, entry.reason ?? entry.message ?? ''),
  );
}

/** The audit trail with filters kept in the URL, newest first, a page at a time. */
export function auditPage(ctx: PageContext, filters: AuditFilters): Page {
  const rows = h('tbody');
  const status = h('p', { class: 'muted' }, 'Loading…');
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
  const project = select('projectId', 'project', [], filters.projectId);
  const flag = select('flagId', 'flag', [], filters.flagId);
  const environment = select(
    'environment',
    'environment',
    ENVIRONMENTS.map((e) => [e, e]),
    filters.environment,
  );
  const action = select(
    'action',
    'action',
    AUDIT_ACTIONS.map((a) => [a, a]),
    filters.action,
  );
  let cursor: string | null = null;

  const apply = () => {
    const next: AuditFilters = {};
    if (project.value) next.projectId = project.value;
    if (project.value && flag.value) next.flagId = flag.value;
    if (environment.value) next.environment = environment.value;
    if (action.value) next.action = action.value;
    ctx.navigate({ name: 'audit', filters: next });
  };
  for (const el of [project, flag, environment, action]) el.addEventListener('change', apply);

  const loadFlags = async (projectId: string) => {
    const { flags } = await ctx.api.get<{ flags: FlagView[] }>(`/api/v1/projects/${encodeURIComponent(projectId)}/flags`);
    replace(
      flag,
      h('option', { value: '' }, 'any flag'),
      flags.map((f) => h('option', { value: f.id }, f.key)),
    );
    flag.value = filters.flagId ?? '';
  };
  ctx.api.get<{ projects: Project[] }>('/api/v1/projects').then(
    ({ projects }) => {
      replace(
        project,
        h('option', { value: '' }, 'any project'),
        projects.map((p) => h('option', { value: p.id }, p.name)),
      );
      project.value = filters.projectId ?? '';
      if (filters.projectId) void loadFlags(filters.projectId).catch(() => undefined);
    },
    () => undefined,
  );
  flag.disabled = !filters.projectId;

  const load = async () => {
    const query = new URLSearchParams({ limit: '50' });
    for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
    if (cursor) query.set('cursor', cursor);
    more.disabled = true;
    try {
      const page = await ctx.api.get<{ entries: AuditEntry[]; nextCursor: string | null }>(`/api/v1/audit?${query}`);
      for (const entry of page.entries) rows.appendChild(entryRow(entry));
      cursor = page.nextCursor;
      more.hidden = cursor === null;
      status.textContent = rows.childElementCount === 0 ? 'No entries match these filters.' : '';
    } catch (err) {
      status.textContent = errorText(err);
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener('click', () => void load());
  void load();

  const element = h(
    'section',
    { class: 'page' },
    h('h1', null, 'Audit log'),
    h(
      'div',
      { class: 'toolbar filters' },
      project,
      flag,
      environment,
      action,
      h('a', { href: hrefOf({ name: 'audit', filters: {} }) }, 'Clear filters'),
    ),
    h(
      'table',
      { class: 'grid audit-table' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ['When', 'Action', 'Flag', 'Environment', 'Who', 'Details'].map((t) => h('th', null, t)),
        ),
      ),
      rows,
    ),
    status,
    more,
  );
  return { element, title: 'Audit log' };
}
