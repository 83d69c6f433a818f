import { h } from '../dom.js';
import { envCell } from '../logic/flag-cells.js';
import type { EnvironmentConfigView } from '../types.js';

/** An environment's state as a compact block: ON/OFF/KILLED, rollout, rules. Killed gets the red marker. */
export function envCellContent(config: EnvironmentConfigView): HTMLElement {
  const cell = envCell(config);
  return h(
    'span',
    { class: `env-state state-${cell.state}`, title: cell.title },
    cell.state === 'killed' ? h('span', { class: 'kill-marker', 'aria-label': 'killed' }) : null,
    h('span', { class: `pill pill-${cell.state}` }, cell.label),
    cell.rollout ? h('span', { class: 'rollout' }, cell.rollout) : null,
    cell.rules ? h('span', { class: 'rules-count' }, cell.rules) : null,
  );
}
