import type { Api } from '../api.js';
import { h, replace } from '../dom.js';
import { type FlagHealth, HEALTH_LABELS } from '../logic/health.js';
import type { FlagView } from '../types.js';

/** A flag's status as a small tag; its reasons in words are the tag's title. */
export function healthTag(health: FlagHealth | undefined): HTMLElement | null {
  if (!health) return null;
  return h(
    'span',
    {
      class: `tag health ${health.status}`,
      'data-status': health.status,
      title: health.reasons.map((r) => r.message).join('\n') || 'in use',
    },
    HEALTH_LABELS[health.status],
  );
}

/** The status with every reason spelled out, for the flag page. */
export function healthPanel(health: FlagHealth | undefined): HTMLElement | null {
  if (!health) return null;
  return h(
    'div',
    { class: `health-panel ${health.status}`, 'data-status': health.status, role: 'status' },
    h('strong', null, `Health: ${HEALTH_LABELS[health.status]}`),
    health.reasons.length === 0
      ? h('span', { class: 'muted' }, ' — changed or evaluated lately; nothing suggests removing it.')
      : h(
          'ul',
          { class: 'health-reasons' },
          health.reasons.map((r) => h('li', { 'data-code': r.code }, r.message)),
        ),
  );
}

/**
 * The flag page's health line: read with the project's health each time the flag is, and left empty when it
 * cannot be read (an archived flag has no status).
 */
export function healthSlot(api: Api): { element: HTMLElement; refresh(flag: FlagView): void } {
  const element = h('div', { class: 'health-slot' });
  let shown = '';
  return {
    element,
    refresh(flag) {
      if (flag.archivedAt) {
        replace(element);
        shown = '';
        return;
      }
      api.get<{ flags: FlagHealth[] }>(`/api/v1/projects/${encodeURIComponent(flag.projectId)}/flags/health`).then(
        ({ flags }) => {
          const health = flags.find((f) => f.key === flag.key);
          const text = JSON.stringify(health ?? null);
          if (text === shown) return;
          shown = text;
          replace(element, healthPanel(health));
        },
        () => undefined,
      );
    },
  };
}
