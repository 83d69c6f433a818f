import type { Prerequisite } from '@flagops/core';
import { h, replace } from '../dom.js';

export interface PrerequisitesEditor {
  element: HTMLElement;
  read(): Prerequisite[];
  write(prerequisites: readonly Prerequisite[] | undefined, flagKeys: readonly string[], variationsOf: (key: string) => string[]): void;
  setDisabled(disabled: boolean): void;
}

/**
 * The prerequisites of an environment config: a row per flag that must serve a variation for this one to be
 * served (evaluated first, in the same environment, for the same user). A killed prerequisite serves off.
 */
export function prerequisitesEditor(selfKey: string, onInput: () => void): PrerequisitesEditor {
  let rows: Prerequisite[] = [];
  let keys: readonly string[] = [];
  let variations: (key: string) => string[] = () => ['on', 'off'];
  let disabled = false;
  const list = h('tbody');
  const add = h('button', { type: 'button', class: 'add-prerequisite' }, 'Add prerequisite');
  const render = () => {
    replace(
      list,
      rows.map((row, i) => {
        const flag = h(
          'select',
          { name: 'prerequisite-flag', 'aria-label': `Prerequisite ${i + 1} flag` },
          keys.filter((k) => k !== selfKey).map((k) => h('option', { value: k }, k)),
        );
        flag.value = row.flag;
        const variation = h(
          'select',
          { name: 'prerequisite-variation', 'aria-label': `Prerequisite ${i + 1} variation` },
          variations(row.flag).map((v) => h('option', { value: v }, v)),
        );
        variation.value = row.variation;
        const remove = h('button', { type: 'button', 'aria-label': `Remove prerequisite ${i + 1}` }, 'Remove');
        for (const el of [flag, variation, remove]) el.disabled = disabled;
        flag.addEventListener('change', () => {
          row.flag = flag.value;
          row.variation = 'on';
          render();
          onInput();
        });
        variation.addEventListener('change', () => {
          row.variation = variation.value;
          onInput();
        });
        remove.addEventListener('click', () => {
          rows.splice(i, 1);
          render();
          onInput();
        });
        return h('tr', { 'data-prerequisite': row.flag }, h('td', null, flag), h('td', null, 'serves ', variation), h('td', null, remove));
      }),
    );
  };
  add.addEventListener('click', () => {
    const first = keys.find((k) => k !== selfKey);
    if (first === undefined) return;
    rows.push({ flag: first, variation: 'on' });
    render();
    onInput();
  });
  const element = h(
    'div',
    { class: 'prerequisites-editor' },
    h('h3', null, 'Prerequisites'),
    h('p', { class: 'hint' }, 'This flag serves its value off unless each of these flags serves the variation named, for the same user.'),
    h('table', { class: 'prerequisites-table' }, list),
    add,
  );
  return {
    element,
    read: () => rows.map((r) => ({ flag: r.flag, variation: r.variation })),
    write(prerequisites, flagKeys, variationsOf) {
      rows = (prerequisites ?? []).map((p) => ({ ...p }));
      keys = flagKeys;
      variations = variationsOf;
      render();
    },
    setDisabled(value) {
      disabled = value;
      add.disabled = value;
      render();
    },
  };
}
