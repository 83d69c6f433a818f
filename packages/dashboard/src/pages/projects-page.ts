import { errorText } from '../api.js';
import { h, replace } from '../dom.js';
import { may } from '../permissions.js';
import { hrefOf, type Page, type PageContext } from '../route.js';
import type { Project } from '../types.js';

/** Every project of the organisation, and a form to create one. */
export function projectsPage(ctx: PageContext): Page {
  const list = h('tbody');
  const status = h('p', { class: 'muted' }, 'Loading…');
  const name = h('input', { name: 'name', required: true, placeholder: 'Shop' });
  const slug = h('input', { name: 'slug', required: true, placeholder: 'shop', pattern: '[a-z0-9][a-z0-9-]{0,62}' });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const form = h(
    'form',
    { class: 'inline-form', 'aria-label': 'Create a project' },
    h('label', null, 'Name', name),
    h('label', null, 'Slug', slug),
    h('button', { type: 'submit', class: 'primary' }, 'Create project'),
    error,
  );
  // The slug follows the name until someone edits it by hand.
  let slugEdited = false;
  slug.addEventListener('input', () => (slugEdited = true));
  name.addEventListener('input', () => {
    if (!slugEdited)
      slug.value = name.value
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .slice(0, 63);
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    try {
      const project = await ctx.api.send<Project>('POST', '/api/v1/projects', { name: name.value, slug: slug.value });
      ctx.navigate({ name: 'flags', projectId: project.id });
    } catch (err) {
      error.textContent = errorText(err);
    }
  });

  ctx.api.get<{ projects: Project[] }>('/api/v1/projects').then(
    ({ projects }) => {
      status.textContent = projects.length === 0 ? 'No projects yet. Create the first one below.' : '';
      replace(
        list,
        projects.map((p) =>
          h(
            'tr',
            null,
            h('td', null, h('a', { href: hrefOf({ name: 'flags', projectId: p.id }) }, p.name)),
            h('td', { class: 'mono' }, p.slug),
          ),
        ),
      );
    },
    (err) => (status.textContent = errorText(err)),
  );

  const element = h(
    'section',
    { class: 'page' },
    h('h1', null, 'Projects'),
    h('table', { class: 'grid' }, h('thead', null, h('tr', null, h('th', null, 'Project'), h('th', null, 'Slug'))), list),
    status,
    may(ctx, 'project.create') ? h('h2', null, 'New project') : null,
    may(ctx, 'project.create') ? form : null,
  );
  return { element, title: 'Projects' };
}
