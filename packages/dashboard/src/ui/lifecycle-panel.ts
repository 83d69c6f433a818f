import { canonicalJson } from '@flagops/core';
import { errorText } from '../api.js';
import { h } from '../dom.js';
import {
  flagTypes,
  type LifecycleFields,
  type LifecyclePatch,
  lifecycleFields,
  lifecyclePatch,
  lifecycleText,
} from '../logic/lifecycle-form.js';
import { may } from '../permissions.js';
import type { PageContext } from '../route.js';
import type { FlagView } from '../types.js';

export interface LifecyclePanel {
  element: HTMLElement;
  /** A newer flag: show its lifecycle; the form follows unless someone is editing it. */
  update(flag: FlagView): void;
}

/**
 * A flag's lifecycle: what it is for, who owns it, when it should be gone. A role that may change flag metadata
 * gets a form to set, change or remove it (PATCH, sending only what changed); an archived flag is shown only.
 */
export function lifecyclePanel(ctx: PageContext, initial: FlagView, onChanged: (flag: FlagView) => void): LifecyclePanel {
  let flag = initial;
  const summary = h('span', { class: 'lifecycle-summary', 'data-slot': 'lifecycle-summary' });
  const type = h(
    'select',
    { name: 'lifecycleType' },
    flagTypes.map((t) => h('option', { value: t }, t)),
  );
  const owner = h('input', { name: 'owner', placeholder: 'team-checkout', maxlength: 256 });
  const expiresAt = h('input', {
    name: 'expiresAt',
    placeholder: '2027-03-31',
    title: 'An ISO 8601 date (the end of that day, UTC) or date-time',
  });
  const status = h('p', { class: 'form-error', role: 'alert' });
  const remove = h('button', { type: 'button', class: 'secondary', 'data-action': 'remove-lifecycle' }, 'Remove lifecycle');
  const editable = may(ctx, 'flag.update');
  /** The values the form was last filled with: while the inputs still hold them, nobody is editing. */
  let filled = '';

  const values = (): LifecycleFields => ({ type: type.value, owner: owner.value, expiresAt: expiresAt.value });
  const fill = () => {
    const fields = lifecycleFields(flag.lifecycle);
    type.value = fields.type;
    owner.value = fields.owner;
    expiresAt.value = fields.expiresAt;
    filled = canonicalJson(fields);
  };
  const draw = () => {
    summary.textContent = lifecycleText(flag.lifecycle);
    remove.hidden = !flag.lifecycle;
    form.hidden = !editable || flag.archivedAt !== null;
  };
  const patch = async (lifecycle: LifecyclePatch | null) => {
    status.textContent = '';
    try {
      flag = await ctx.api.send<FlagView>('PATCH', `/api/v1/flags/${encodeURIComponent(flag.id)}`, { lifecycle });
      fill();
      draw();
      onChanged(flag);
      status.textContent = '';
    } catch (err) {
      status.textContent = errorText(err);
    }
  };

  const form = h(
    'form',
    { class: 'inline-form', 'aria-label': 'Lifecycle' },
    h('label', null, 'Type', type),
    h('label', null, 'Owner', owner),
    h('label', null, 'Expires', expiresAt),
    h('button', { type: 'submit', class: 'primary', 'data-action': 'save-lifecycle' }, 'Save lifecycle'),
    remove,
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const change = lifecyclePatch(flag.lifecycle, values());
    if (change === undefined) {
      status.textContent = 'Nothing to save: the lifecycle is already this.';
      return;
    }
    void patch(change);
  });
  remove.addEventListener('click', () => void patch(null));

  fill();
  draw();
  // One line (the flag page's editor comes right after); a role that may change it opens the form from it.
  const title = [h('strong', null, 'Lifecycle'), ' ', summary];
  const element = h(
    'section',
    { class: 'lifecycle-panel', 'data-testid': 'lifecycle' },
    editable
      ? h('details', null, h('summary', { title: 'Change the lifecycle' }, title, h('span', { class: 'muted' }, ' · change…')), form)
      : h('p', null, title),
  );
  return {
    element,
    update(fresh) {
      const editing = canonicalJson(values()) !== filled;
      flag = fresh;
      if (!editing) fill();
      draw();
    },
  };
}
