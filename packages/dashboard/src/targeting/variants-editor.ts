import type { Variant } from '@flagops/core';
import { h, replace } from '../dom.js';
import type { FlagKind } from '../types.js';
import { variationColor } from '../ui/stats-chart.js';
import { type CheckedVariants, checkVariantRows, rowsOf, type VariantRow, weightSegments } from './variant-rows.js';

export interface VariantsEditor {
  element: HTMLElement;
  /** What the rows say now: the variants to send (none: serve valueOn), or why they cannot be sent. */
  read(): CheckedVariants;
  write(variants: readonly Variant[] | undefined): void;
  setDisabled(disabled: boolean): void;
}

/**
 * The variants of an environment config: a row per variant (name, value, weight), a bar showing the split,
 * and the total, which must be 100. `onInput` fires on every change, so the page can validate as people type.
 */
export function variantsEditor(kind: FlagKind, onInput: () => void): VariantsEditor {
  let rows: VariantRow[] = [];
  let disabled = false;
  const body = h('tbody');
  const bar = h('div', { class: 'weight-bar', role: 'img', 'aria-label': 'Variant weights' });
  const total = h('span', { class: 'weight-total', 'data-total': '' });
  const messages = h('ul', { class: 'field-messages', 'data-messages': 'variants' });
  const add = h('button', { type: 'button', class: 'add-variant' }, 'Add variant');

  const changed = () => {
    paint();
    onInput();
  };
  const paint = () => {
    const names = rows.map((r) => r.name);
    replace(
      bar,
      weightSegments(rows).map((s) => {
        const segment = h('span', { class: 'weight-segment', 'data-variant': s.name, title: `${s.name}: ${s.width}%` });
        // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
        segment.style.width = `${s.width}%`;
        segment.style.background = variationColor(s.name, names);
        return segment;
      }),
    );
    const checked = checkVariantRows(kind, rows);
    total.textContent = rows.length === 0 ? 'No variants: the config serves its value on.' : `Total ${checked.total}%`;
    total.className = `weight-total ${rows.length > 0 && checked.total !== 100 ? 'warning' : ''}`;
    replace(
      messages,
      checked.issues.map((m) => h('li', null, m)),
    );
    messages.hidden = checked.issues.length === 0;
  };
  const render = () => {
    replace(
      body,
      rows.map((row, i) => {
        const input = (field: keyof VariantRow, attrs: Record<string, string>) => {
          const el = h('input', { value: row[field], 'aria-label': `Variant ${i + 1} ${field}`, name: `variant-${field}`, ...attrs });
          el.disabled = disabled;
          el.addEventListener('input', () => {
            row[field] = el.value;
            changed();
          });
          return el;
        };
        const remove = h('button', { type: 'button', class: 'remove-variant', 'aria-label': `Remove variant ${i + 1}` }, 'Remove');
        remove.disabled = disabled;
        remove.addEventListener('click', () => {
          rows.splice(i, 1);
          render();
          changed();
        });
        return h(
          'tr',
          { 'data-variant-row': String(i) },
          h('td', null, input('name', { placeholder: 'control', class: 'mono' })),
          h('td', null, input('value', { class: 'mono' })),
          h('td', null, input('weight', { inputmode: 'decimal', size: '6', class: 'mono' }), ' %'),
          h('td', null, remove),
        );
      }),
    );
    paint();
  };
  add.addEventListener('click', () => {
    const left = Math.max(0, Math.round((100 - rows.reduce((sum, r) => sum + (Number(r.weight) || 0), 0)) * 100) / 100);
    rows.push({
      name: `variant-${rows.length + 1}`,
      value: kind === 'boolean' ? 'true' : kind === 'number' ? '0' : kind === 'json' ? 'null' : '',
      weight: String(left),
    });
    render();
    changed();
  });

  const element = h(
    'div',
    { class: 'variants-editor' },
    h('h3', null, 'Variants'),
    h('p', { class: 'hint' }, 'Users who would get the value on get one of these instead, by their variant bucket. Weights add up to 100.'),
    h(
      'table',
      { class: 'variants-table' },
      h('thead', null, h('tr', null, h('th', null, 'Name'), h('th', null, 'Value'), h('th', null, 'Weight'), h('th'))),
      body,
    ),
    bar,
    h('p', null, total, ' ', add),
    messages,
  );
  return {
    element,
    read: () => checkVariantRows(kind, rows),
    write(variants) {
      rows = rowsOf(kind, variants);
      render();
    },
    setDisabled(value) {
      disabled = value;
      add.disabled = value;
      render();
    },
  };
}
