import { h } from '../dom.js';
import type { KilledEntry } from '../logic/flag-cells.js';
import { ago, localTime } from '../logic/time-text.js';
import { hrefOf } from '../route.js';

/**
 * The red banner over a page while kills are active: which flag, where, by whom, since when. A kill is the
 * most important state in flagops (service-spec §3), so it is never shown only as a small marker.
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
      ` by ${config.killedBy ?? 'unknown'}`,
      config.killedAt ? h('span', { title: localTime(config.killedAt) }, ` ${ago(config.killedAt, now)}`) : null,
      config.killReason ? ` — ${config.killReason}` : null,
    ),
  );
  const title = showFlag
    ? `${entries.length} kill${entries.length === 1 ? '' : 's'} active: these serve their off value to everyone`
    : 'This flag is killed: it serves its off value to everyone there';
  return h('div', { class: 'kill-banner', role: 'alert' }, h('strong', null, title), h('ul', null, items));
}
