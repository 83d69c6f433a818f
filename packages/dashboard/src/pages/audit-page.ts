import { AUDIT_ACTIONS, ENVIRONMENTS } from '@flagops/core';
import { errorText } from '../api.js';
import { h, replace } from '../dom.js';
import { actionWords, actorName, actorVia, shortCommit } from '../logic/audit-words.js';
import { localTimeWithZone, utcTime, when, zoneName } from '../logic/text.js';
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

/** An entry as the audit API answers it with `include=changes`: what its commit changed there, in words. */
type EntryWithChanges = AuditEntry & { changes?: string[] };

function who(actor: AuditEntry['actor']): HTMLElement {
  return h(
    'span',
    { class: 'actor-name' },
    h('strong', null, actorName(actor)),
    actor.keyPrefix ? h('span', { class: 'key-prefix mono' }, ` ${actor.keyPrefix}`) : null,
    h('span', { class: 'muted' }, ` · ${actorVia(actor)}`),
  );
}

function entryRow(entry: EntryWithChanges, now: number): HTMLElement {
  const flag =
    entry.projectSlug && entry.flagKey
      ? h(
          'a',
          {
            href: hrefOf({ name: 'flag-by-key', projectSlug: entry.projectSlug, key: entry.flagKey }),
            title: `${entry.projectSlug}/${entry.flagKey}`,
          },
          entry.flagKey,
        )
      : (entry.segmentKey ?? entry.projectSlug ?? '—');
  const where = entry.environment ? (entry.fromEnvironment ? `${entry.fromEnvironment} → ${entry.environment}` : entry.environment) : '—';
  const recent = now - Date.parse(entry.at) < 7 * 86400_000;
  const why = entry.reason ?? null;
  return h(
    'tr',
    { class: `audit-row action-${entry.action}`, 'data-action': entry.action },
    h(
      'td',
      { class: 'nowrap when', title: utcTime(entry.at) },
      h('time', { datetime: entry.at }, localTimeWithZone(entry.at)),
      recent ? h('div', { class: 'muted small' }, when(entry.at, now)) : null,
    ),
    h('td', { class: 'nowrap' }, h('span', { class: `tag action-tag action-${entry.action}` }, actionWords(entry.action))),
    h('td', { class: 'nowrap flag-cell' }, flag),
    h('td', { class: 'nowrap' }, where),
    h('td', { class: 'actor' }, who(entry.actor)),
    h(
      'td',
      { class: 'change' },
      entry.changes && entry.changes.length > 0
        ? h(
            'ul',
            { class: 'change-list' },
            entry.changes.map((c) => h('li', null, c)),
          )
        : entry.changes
          ? h('span', { class: 'muted' }, 'no effective change')
          : null,
      why ? h('div', { class: 'muted' }, `Reason: ${why}`) : null,
      !entry.changes && !why && entry.message ? h('div', { class: 'muted' }, entry.message) : null,
    ),
    h('td', { class: 'nowrap mono commit', title: entry.id }, shortCommit(entry.id)),
  );
}

/** The audit trail with filters kept in the URL, newest first, a page at a time. */
export function auditPage(ctx: PageContext, filters: AuditFilters): Page {
  const rows = h('tbody');
  const status = h('p', { class: 'muted' }, 'Loading…');
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
  const zone = zoneName(new Date());
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
    AUDIT_ACTIONS.map((a) => [a, actionWords(a)]),
    filters.action,
  );
  const actor = h('input', {
    type: 'search',
    name: 'actor',
    value: filters.actor ?? '',
    placeholder: 'who: a name or key prefix',
    'aria-label': 'Filter by who acted',
  });
  let cursor: string | null = null;

  const apply = () => {
    const next: AuditFilters = {};
    if (project.value) next.projectId = project.value;
    if (project.value && flag.value) next.flagId = flag.value;
    if (environment.value) next.environment = environment.value;
    if (action.value) next.action = action.value;
    if (actor.value.trim()) next.actor = actor.value.trim();
    ctx.navigate({ name: 'audit', filters: next });
  };
  for (const el of [project, flag, environment, action, actor]) el.addEventListener('change', apply);

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
    const query = new URLSearchParams({ limit: '50', include: 'changes' });
    for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
    if (cursor) query.set('cursor', cursor);
    more.disabled = true;
    try {
      const page = await ctx.api.get<{ entries: EntryWithChanges[]; nextCursor: string | null }>(`/api/v1/audit?${query}`);
      for (const entry of page.entries) rows.appendChild(entryRow(entry, Date.now()));
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
    h('p', { class: 'hint' }, `Times are local (${zone}); hover one for UTC. Each entry is one commit of the flags repository.`),
    h(
      'div',
      { class: 'toolbar filters' },
      project,
      flag,
      environment,
      action,
      actor,
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
          ['When', 'What', 'Flag', 'Environment', 'Who', 'Change', 'Commit'].map((t) => h('th', null, t)),
        ),
      ),
      rows,
    ),
    status,
    more,
  );
  return { element, title: 'Audit log' };
}
