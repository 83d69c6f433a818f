import { h } from '../dom.js';
import { envCell, type KilledEntry } from '../logic/flag-cells.js';
import { localTimeWithZone, utcTime, when } from '../logic/text.js';
import { hrefOf } from '../route.js';
import type { EnvironmentConfigView } from '../types.js';
import { actorNode } from './actor-names.js';

/** An environment's state as a compact block: ON/OFF/KILLED, rollout, rules. Killed gets the red marker. */
export function envCellContent(config: EnvironmentConfigView): HTMLElement {
  const cell = envCell(config);
  return h(
    'span',
    { class: `env-state state-${cell.state}`, title: cell.title },
    cell.state === 'killed' ? h('span', { class: 'kill-marker', role: 'img', 'aria-label': 'killed' }) : null,
    h('span', { class: `pill pill-${cell.state}` }, cell.label),
    cell.rollout ? h('span', { class: 'rollout' }, cell.rollout) : null,
    cell.rules ? h('span', { class: 'rules-count' }, cell.rules) : null,
  );
}

/**
 * The red banner over a page while kills are active: which flag, where, by whom, since when. A kill is the
 * most important state in flagops, so it is never shown only as a small marker.
 */
export function killBanner(entries: KilledEntry[], now: number, showFlag: boolean): HTMLElement | null {
  if (entries.length === 0) return null;
  const items = entries.map(({ flag, env, config }) =>
    h(
      'li',
      { 'data-killed': `${flag.key}/${env}` },
      showFlag ? h('a', { href: hrefOf({ name: 'flag', flagId: flag.id, env }) }, flag.key) : null,
      showFlag ? ' in ' : 'Killed in ',
      h('strong', null, env),
      ' by ',
      actorNode(config.killedBy ?? 'unknown'),
      config.killedAt
        ? h('span', { title: `${localTimeWithZone(config.killedAt)} · ${utcTime(config.killedAt)}` }, ` ${when(config.killedAt, now)}`)
        : null,
      config.killReason ? ` — ${config.killReason}` : null,
    ),
  );
  const title = showFlag
    ? `${entries.length} kill${entries.length === 1 ? '' : 's'} active: these serve their off value to everyone`
    : 'This flag is killed: it serves its off value to everyone there';
  return h('div', { class: 'kill-banner', role: 'alert' }, h('strong', null, title), h('ul', null, items));
}
