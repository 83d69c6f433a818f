import { h } from '../dom.js';
import type { Page, PageContext } from '../page.js';
import type { FlagView } from '../types.js';
import { errorText } from '../ui/error-text.js';

/** `#/lookup/<slug>/<key>`: how audit entries (which name flags by key) link to a flag's page. */
export function flagByKeyPage(ctx: PageContext, projectSlug: string, key: string): Page {
  const element = h('section', { class: 'page' }, h('p', { class: 'muted' }, `Looking up ${projectSlug}/${key}…`));
  const query = new URLSearchParams({ projectSlug, key });
  ctx.api.get<FlagView>(`/api/v1/flags/lookup?${query}`).then(
    (flag) => ctx.navigate({ name: 'flag', flagId: flag.id, env: 'prod' }),
    (err) => element.replaceChildren(h('p', { class: 'form-error' }, `${projectSlug}/${key}: ${errorText(err)}`)),
  );
  return { element, title: key };
}
