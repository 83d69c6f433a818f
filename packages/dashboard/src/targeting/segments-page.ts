import type { AttributeCondition } from '@flagops/core';
import { ApiError, errorText } from '../api.js';
import { h, replace } from '../dom.js';
import { may } from '../permissions.js';
import { hrefOf, type Page, type PageContext } from '../route.js';
import type { SegmentView } from '../types.js';

const segmentsPath = (projectId: string) => `/api/v1/projects/${encodeURIComponent(projectId)}/segments`;
const segmentPath = (projectId: string, key: string) => `${segmentsPath(projectId)}/${encodeURIComponent(key)}`;
export const segmentsHref = (projectId: string) => hrefOf({ name: 'segments', projectId });
const segmentHref = (projectId: string, key: string) => hrefOf({ name: 'segment', projectId, key });

/** User ids typed one per line (or separated by commas): blank entries dropped, order kept, duplicates once. */
export function parseUserIds(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[\n,]/)
        .map((id) => id.trim())
        .filter(Boolean),
    ),
  ];
}

/** Conditions typed as a JSON list, or why they cannot be read. */
export function parseConditions(text: string): { ok: true; value: AttributeCondition[] } | { ok: false; message: string } {
  if (text.trim() === '') return { ok: true, value: [] };
  try {
    const value = JSON.parse(text) as unknown;
    if (!Array.isArray(value))
      return { ok: false, message: 'Conditions must be a JSON list: [{ "attribute": "plan", "op": "eq", "value": "beta" }]' };
    return { ok: true, value: value as AttributeCondition[] };
  } catch (err) {
    return { ok: false, message: `Conditions are not valid JSON: ${(err as Error).message}` };
  }
}

/** A project's segments: key, name, size, where each is used; and a form to create one. */
export function segmentsPage(ctx: PageContext, projectId: string): Page {
  const list = h('tbody');
  const status = h('p', { class: 'muted' }, 'Loading…');
  const key = h('input', { name: 'segment-key', required: true, placeholder: 'beta-testers', pattern: '[a-z0-9][a-z0-9._-]{0,63}' });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const form = h(
    'form',
    { class: 'inline-form', 'aria-label': 'Create a segment' },
    h('label', null, 'Key', key),
    h('button', { type: 'submit', class: 'primary' }, 'Create segment'),
    error,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    try {
      await ctx.api.send('PUT', segmentPath(projectId, key.value.trim()), { expectedVersion: 0 });
      location.hash = segmentHref(projectId, key.value.trim());
    } catch (err) {
      error.textContent = errorText(err);
    }
  });
  const load = async () => {
    try {
      const { segments } = await ctx.api.get<{ segments: SegmentView[] }>(segmentsPath(projectId));
      status.textContent = segments.length === 0 ? 'No segments yet.' : '';
      replace(
        list,
        segments.map((s) =>
          h(
            'tr',
            { 'data-segment': s.key },
            h(
              'td',
              null,
              h('a', { href: segmentHref(projectId, s.key), class: 'flag-key' }, s.key),
              s.name && s.name !== s.key ? h('div', { class: 'muted' }, s.name) : null,
            ),
            h(
              'td',
              null,
              `${s.userIds.length} user id${s.userIds.length === 1 ? '' : 's'}, ${s.conditions.length} condition${s.conditions.length === 1 ? '' : 's'}`,
            ),
            h('td', { class: 'used-by' }, s.usedBy.length === 0 ? h('span', { class: 'muted' }, 'unused') : s.usedBy.join(', ')),
          ),
        ),
      );
    } catch (err) {
      status.textContent = errorText(err);
    }
  };
  void load();
  return {
    title: 'Segments',
    element: h(
      'section',
      { class: 'page segments-page' },
      h('p', null, h('a', { href: hrefOf({ name: 'flags', projectId }) }, '← Flags')),
      h('h1', null, 'Segments'),
      h(
        'p',
        { class: 'hint' },
        'Reusable audiences: a user is in a segment when listed, or when all its conditions hold. Rules target them with in_segment.',
      ),
      may(ctx, 'segment.update') ? form : null,
      status,
      h(
        'table',
        { class: 'segments-table' },
        h('thead', null, h('tr', null, h('th', null, 'Segment'), h('th', null, 'Size'), h('th', null, 'Used by'))),
        list,
      ),
    ),
  };
}

/** One segment: its user ids and conditions to edit, where it is used, and deleting it. */
export function segmentPage(ctx: PageContext, projectId: string, key: string): Page {
  let version = 0;
  const name = h('input', { name: 'name' });
  const description = h('input', { name: 'description' });
  const userIds = h('textarea', { name: 'userIds', rows: 8, class: 'mono', spellcheck: 'false', placeholder: 'one user id per line' });
  const conditions = h('textarea', {
    name: 'conditions',
    rows: 5,
    class: 'mono',
    spellcheck: 'false',
    placeholder: '[{ "attribute": "plan", "op": "eq", "value": "beta" }]',
  });
  const usedBy = h('p', { class: 'used-by' });
  const status = h('p', { class: 'save-status', role: 'status' });
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save segment');
  const remove = h('button', { type: 'button', class: 'danger' }, 'Delete segment');
  const show = (s: SegmentView) => {
    version = s.version;
    name.value = s.name;
    description.value = s.description;
    userIds.value = s.userIds.join('\n');
    conditions.value = s.conditions.length === 0 ? '' : JSON.stringify(s.conditions, null, 2);
    usedBy.textContent = s.usedBy.length === 0 ? 'Not used by any flag.' : `Used by ${s.usedBy.join(', ')}.`;
  };
  const form = h(
    'form',
    { class: 'segment-form', 'aria-label': `Segment ${key}`, inert: !may(ctx, 'segment.update') },
    h('label', null, 'Name', name),
    h('label', null, 'Description', description),
    h('label', null, 'User ids (at most 10,000)', userIds),
    h('label', null, 'Conditions (JSON; all must hold)', conditions),
    may(ctx, 'segment.update') ? h('div', { class: 'actions' }, save, remove) : null,
    status,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const parsed = parseConditions(conditions.value);
    if (!parsed.ok) {
      status.textContent = parsed.message;
      return;
    }
    const body: Record<string, unknown> = { userIds: parseUserIds(userIds.value), conditions: parsed.value, expectedVersion: version };
    if (name.value.trim()) body.name = name.value.trim();
    if (description.value.trim()) body.description = description.value.trim();
    try {
      show(await ctx.api.send<SegmentView>('PUT', segmentPath(projectId, key), body));
      status.textContent = 'Saved.';
    } catch (err) {
      status.textContent =
        err instanceof ApiError && err.code === 'version_conflict'
          ? 'Someone changed this segment meanwhile: reload to see it.'
          : errorText(err);
    }
  });
  remove.addEventListener('click', async () => {
    try {
      await ctx.api.send('DELETE', segmentPath(projectId, key));
      location.hash = segmentsHref(projectId);
    } catch (err) {
      status.textContent = errorText(err);
    }
  });
  ctx.api.get<SegmentView>(segmentPath(projectId, key)).then(show, (err) => {
    status.textContent = errorText(err);
  });
  return {
    title: `Segment ${key}`,
    element: h(
      'section',
      { class: 'page segment-page' },
      h('p', null, h('a', { href: segmentsHref(projectId) }, '← Segments')),
      h('h1', null, `Segment ${key}`),
      usedBy,
      form,
    ),
  };
}
