import { canonicalJson, type EnvironmentName } from '@flagops/core';
import { ApiError, errorText } from '../api.js';
import { h } from '../dom.js';
import type { PageContext } from '../route.js';
import type { FlagView } from '../types.js';
import { prerequisitesEditor } from './prerequisites-editor.js';
import { segmentsHref } from './segments-page.js';
import { variantsEditor } from './variants-editor.js';

export interface TargetingPanel {
  element: HTMLElement;
  /** A newer flag arrived: shown unless the person is editing. */
  update(flag: FlagView): void;
}

/**
 * The variants and prerequisites of one environment's config, saved together with expectedVersion (a change
 * made elsewhere meanwhile is a conflict, never overwritten). Self-contained: it talks to the config endpoint
 * itself and tells the page about the flag it got back.
 */
export function targetingPanel(
  ctx: PageContext,
  initial: FlagView,
  env: EnvironmentName,
  onChanged: (flag: FlagView) => void,
): TargetingPanel {
  let flag = initial;
  let projectFlags: FlagView[] = [];
  let shown = '';
  const status = h('span', { class: 'targeting-status', role: 'status' });
  const save = h('button', { type: 'button', class: 'primary', 'data-action': 'save-targeting' }, 'Save variants and prerequisites');
  const refresh = () => {
    save.disabled = !dirty() || variants.read().issues.length > 0;
  };
  const variants = variantsEditor(initial.kind, refresh);
  const prerequisites = prerequisitesEditor(initial.key, refresh);
  const saved = () => canonicalJson({ v: flag.environments[env].variants ?? [], p: flag.environments[env].prerequisites ?? [] });
  const current = () => canonicalJson({ v: variants.read().variants, p: prerequisites.read() });
  const dirty = () => current() !== shown && !(variants.read().issues.length === 0 && current() === saved());

  const variationsOf = (key: string) => {
    const other = projectFlags.find((f) => f.key === key);
    // What that flag can serve here: off, and on or (with variants, which it serves instead of on) its variants.
    // A prerequisite on anything else could never be met, and is refused.
    const named = (other?.environments[env].variants ?? []).map((v) => v.name);
    return named.length > 0 ? ['off', ...named] : ['on', 'off'];
  };
  const show = (fresh: FlagView) => {
    flag = fresh;
    const config = fresh.environments[env];
    variants.write(config.variants);
    prerequisites.write(
      config.prerequisites,
      projectFlags.map((f) => f.key),
      variationsOf,
    );
    shown = saved();
    refresh();
  };

  save.addEventListener('click', async () => {
    const checked = variants.read();
    if (checked.issues.length > 0) return;
    save.disabled = true;
    status.textContent = 'Saving…';
    try {
      const fresh = await ctx.api.send<FlagView>('PUT', `/api/v1/flags/${encodeURIComponent(flag.id)}/environments/${env}/config`, {
        variants: checked.variants.length > 0 ? checked.variants : null,
        prerequisites: prerequisites.read(),
        expectedVersion: flag.environments[env].version,
      });
      show(fresh);
      status.textContent = 'Saved.';
      onChanged(fresh);
    } catch (err) {
      status.textContent =
        err instanceof ApiError && err.code === 'version_conflict' ? 'The config was changed meanwhile: reload to see it.' : errorText(err);
      refresh();
    }
  });

  ctx.api.get<{ flags: FlagView[] }>(`/api/v1/projects/${encodeURIComponent(initial.projectId)}/flags`).then(
    (list) => {
      projectFlags = list.flags;
      show(flag);
    },
    (err) => {
      status.textContent = errorText(err);
    },
  );
  show(initial);

  const element = h(
    'section',
    { class: 'card targeting', 'data-env': env },
    h('div', { class: 'card-head' }, h('h2', null, `Variants and prerequisites in ${env}`)),
    variants.element,
    prerequisites.element,
    h(
      'p',
      { class: 'hint' },
      'Rules target segments with in_segment. ',
      h('a', { href: segmentsHref(initial.projectId) }, 'Segments of this project'),
    ),
    h('div', { class: 'actions' }, save, status),
  );
  return {
    element,
    update(fresh) {
      // Someone editing keeps their rows; otherwise what the server has is shown.
      if (canonicalJson(fresh.environments[env]) === canonicalJson(flag.environments[env])) return;
      if (current() === shown) show(fresh);
      else flag = fresh;
    },
  };
}
