import { ENVIRONMENTS, type EnvironmentName } from '@flagops/core';
import { errorText } from '../api.js';
import { h, replace } from '../dom.js';
import { type PromotionPreview, promotionPreview } from '../logic/config-diff.js';
import type { PageContext } from '../route.js';
import type { FlagView } from '../types.js';
import { fieldLabel } from './config-form.js';
import { confirmDialog } from './confirm-dialog.js';

const FIELD_WORDS = { enabled: 'Enabled', rolloutPct: 'Rollout %', valueOn: 'Served when on', valueOff: 'Served when off' } as const;

function previewTable(preview: PromotionPreview, from: EnvironmentName, to: EnvironmentName): HTMLElement {
  if (preview.unchanged) {
    return h(
      'p',
      { class: 'muted' },
      `${to} already has ${from}'s config; promoting only records the deploy (version ${preview.versionAfter}).`,
    );
  }
  return h(
    'table',
    { class: 'grid diff' },
    h('thead', null, h('tr', null, h('th', null, 'What'), h('th', null, `Now in ${to}`), h('th', null, `After promoting ${from}`))),
    h(
      'tbody',
      null,
      preview.fields.map((c) =>
        h(
          'tr',
          { class: 'diff-changed' },
          h('td', null, fieldLabel(FIELD_WORDS[c.field], c.field)),
          h('td', { class: 'before' }, c.before),
          h('td', { class: 'after' }, c.after),
        ),
      ),
      preview.rules.map((r) =>
        h(
          'tr',
          { class: `diff-${r.kind}` },
          h('td', null, `rule ${r.id} (${r.kind})`),
          h('td', { class: 'before' }, r.before ?? '—'),
          h('td', { class: 'after' }, r.after ?? '—'),
        ),
      ),
      h(
        'tr',
        null,
        h('td', null, 'version'),
        h('td', { class: 'before' }, String(preview.versionAfter - 1)),
        h('td', { class: 'after' }, String(preview.versionAfter)),
      ),
    ),
  );
}

/**
 * Promote into the environment on screen from another one, after a preview of exactly what the destination
 * will look like. The preview is re-computed from the latest flag when the button is pressed.
 */
export function promotePanel(
  ctx: PageContext,
  getFlag: () => FlagView,
  to: EnvironmentName,
  onDone: (flag: FlagView) => void,
): HTMLElement & { refresh(): void } {
  const sources = ENVIRONMENTS.filter((e) => e !== to);
  const select = h(
    'select',
    { 'aria-label': 'Promote from' },
    sources.map((e) => h('option', { value: e }, e)),
  );
  select.value = to === 'prod' ? 'staging' : to === 'staging' ? 'dev' : 'staging';
  const slot = h('div', { class: 'preview-slot', id: `promote-preview-${to}`, hidden: true });
  const error = h('p', { class: 'form-error', role: 'alert' });
  // The comparison is drawn only when asked for: unasked, a table of differences under the editor reads like unsaved changes.
  const compare = h(
    'button',
    { type: 'button', class: 'secondary', 'data-action': 'compare', 'aria-expanded': 'false', 'aria-controls': `promote-preview-${to}` },
    'Compare',
  );
  compare.addEventListener('click', () => {
    slot.hidden = !slot.hidden;
    compare.setAttribute('aria-expanded', String(!slot.hidden));
    compare.textContent = slot.hidden ? 'Compare' : 'Hide comparison';
    show();
  });
  const show = () => {
    if (slot.hidden) return;
    const flag = getFlag();
    const from = select.value as EnvironmentName;
    replace(slot, previewTable(promotionPreview(flag.environments[from], flag.environments[to]), from, to));
  };
  select.addEventListener('change', show);
  const button = h('button', { type: 'button', class: 'primary', 'data-action': 'promote' }, 'Promote…');
  button.addEventListener('click', async () => {
    error.textContent = '';
    const from = select.value as EnvironmentName;
    const flag = getFlag();
    const preview = promotionPreview(flag.environments[from], flag.environments[to]);
    const { confirmed } = await confirmDialog({
      title: `Promote ${flag.key} from ${from} to ${to}?`,
      body: [
        to === 'prod' ? h('p', { class: 'warning' }, 'This is a deploy: it changes what production users get, at once.') : null,
        h('p', null, `${to}'s whole config becomes ${from}'s. A kill in ${to} stays until it is cleared.`),
        previewTable(preview, from, to),
      ],
      confirmLabel: `Promote to ${to}`,
      danger: to === 'prod',
    });
    if (!confirmed) return;
    try {
      onDone(
        await ctx.api.send<FlagView>('POST', `/api/v1/flags/${encodeURIComponent(flag.id)}/environments/${to}/promote`, { fromEnv: from }),
      );
    } catch (err) {
      error.textContent = errorText(err);
    }
  });
  show();
  return Object.assign(
    h(
      'section',
      { class: 'card promote' },
      h(
        'div',
        { class: 'card-head' },
        h('h2', null, `Promote into ${to}`),
        h('label', { class: 'inline' }, 'from ', select),
        compare,
        button,
      ),
      h('p', { class: 'hint' }, `Copies another environment's whole config into ${to}. Compare shows what would change first.`),
      slot,
      error,
    ),
    { refresh: show },
  );
}
