import { canonicalJson, ENVIRONMENTS, type EnvironmentName } from '@flagops/core';
import { errorText } from '../api.js';
import { h, replace } from '../dom.js';
import { killedEntries } from '../logic/flag-cells.js';
import { may, mayPromoteInto, readOnlyUnless } from '../permissions.js';
import { type PendingProposal, pendingProposal } from '../proposals/pending-proposal.js';
import { hrefOf, type Page, type PageContext } from '../route.js';
import { type SchedulePanel, schedulePanel } from '../schedule/schedule-panel.js';
import { type TargetingPanel, targetingPanel } from '../targeting/targeting-panel.js';
import type { FlagView } from '../types.js';
import { learnKeyNames } from '../ui/actor-names.js';
import { confirmDialog } from '../ui/confirm-dialog.js';
import { type EnvEditor, envEditor } from '../ui/env-editor.js';
import { envCellContent, killBanner } from '../ui/flag-state.js';
import { healthSlot } from '../ui/health-badge.js';
import { invalidFileLine } from '../ui/invalid-files-banner.js';
import { type LifecyclePanel, lifecyclePanel } from '../ui/lifecycle-panel.js';
import { promotePanel } from '../ui/promote-panel.js';
import { statsPanel } from '../ui/stats-panel.js';

function tabs(flag: FlagView, current: EnvironmentName): HTMLElement {
  return h(
    'nav',
    { class: 'env-tabs', 'aria-label': 'Environments' },
    ENVIRONMENTS.map((env) =>
      h(
        'a',
        {
          href: hrefOf({ name: 'flag', flagId: flag.id, env }),
          class: env === current ? 'env-tab active' : 'env-tab',
          'data-env': env,
          'aria-current': env === current ? 'page' : null,
        },
        h('span', { class: 'env-name' }, env),
        envCellContent(flag.environments[env]),
      ),
    ),
  );
}

function header(ctx: PageContext, flag: FlagView, onChanged: (flag: FlagView) => void): HTMLElement {
  const archive = async () => {
    const { confirmed } = await confirmDialog({
      title: `Archive ${flag.key}?`,
      body: h(
        'p',
        null,
        `SDKs then serve its default value (${JSON.stringify(flag.defaultValue)}) in every environment, unless it is killed there.`,
      ),
      confirmLabel: 'Archive',
      danger: true,
    });
    if (confirmed) onChanged(await ctx.api.send<FlagView>('DELETE', `/api/v1/flags/${encodeURIComponent(flag.id)}`));
  };
  return h(
    'div',
    { class: 'flag-header' },
    h(
      'h1',
      null,
      h('span', { class: 'mono' }, flag.key),
      flag.name !== flag.key ? h('span', { class: 'subtitle' }, ` ${flag.name}`) : null,
    ),
    h(
      'p',
      { class: 'muted' },
      `${flag.kind} flag · default ${JSON.stringify(flag.defaultValue)}`,
      flag.description ? ` · ${flag.description}` : '',
      flag.archivedAt ? h('span', { class: 'tag' }, `archived ${flag.archivedAt.slice(0, 10)}`) : null,
    ),
    flag.archivedAt || !may(ctx, 'flag.archive')
      ? null
      : h('button', { type: 'button', class: 'secondary small', onclick: archive }, 'Archive…'),
  );
}

/** While an invalid file holds the flag back: what is shown, what is refused, and which file to fix. */
function heldBackNotice(flag: FlagView): HTMLElement | null {
  if (!flag.invalidFiles?.length) return null;
  return h(
    'div',
    { class: 'held-back-notice', role: 'status' },
    h('strong', null, 'Held back. '),
    'An invalid file on main keeps this flag at its last valid state, shown and served here. Changes other than kills are refused until it is fixed:',
    h(
      'ul',
      null,
      flag.invalidFiles.map((entry) => h('li', { class: 'mono' }, invalidFileLine(entry))),
    ),
  );
}

/** One flag: every environment at a glance, the chosen one's editor, promotion with a preview, and stats. */
export function flagPage(ctx: PageContext, flagId: string, env: EnvironmentName): Page {
  const crumbs = h('p', { class: 'crumbs' }, h('a', { href: hrefOf({ name: 'projects' }) }, 'Projects'));
  const top = h('div', { class: 'flag-top' }, h('p', { class: 'muted' }, 'Loading…'));
  const body = h('div', { class: 'flag-body' });
  let flag: FlagView | undefined;
  let editor: EnvEditor | undefined;
  let targeting: TargetingPanel | undefined;
  let schedule: SchedulePanel | undefined;
  let lifecycle: LifecyclePanel | undefined;
  let promote: (HTMLElement & { refresh(): void }) | undefined;
  let pending: PendingProposal | undefined;
  let drawn = '';
  const health = healthSlot(ctx.api);

  const drawTop = (fresh: FlagView) => {
    const fingerprint = canonicalJson({ fresh, minute: Math.floor(Date.now() / 60_000) });
    if (fingerprint === drawn) return;
    drawn = fingerprint;
    replace(
      crumbs,
      h('a', { href: hrefOf({ name: 'projects' }) }, 'Projects'),
      ' / ',
      h('a', { href: hrefOf({ name: 'flags', projectId: fresh.projectId }) }, fresh.projectSlug),
    );
    replace(
      top,
      header(ctx, fresh, changed),
      health.element,
      heldBackNotice(fresh),
      killBanner(killedEntries([fresh]), Date.now(), false),
      tabs(fresh, env),
    );
  };
  /** A newer flag from any source: redraw the summary, tell the editor and the promotion preview. */
  function changed(fresh: FlagView): void {
    const same = flag !== undefined && canonicalJson(flag) === canonicalJson(fresh);
    flag = fresh;
    drawTop(fresh);
    editor?.update(fresh);
    targeting?.update(fresh);
    schedule?.update(fresh);
    lifecycle?.update(fresh);
    // The preview is a table: redrawn only when the flag changed, so it can be read while updates go on.
    if (!same) promote?.refresh();
    // A change of the flag may have made a pending proposal stale, or applied it.
    if (!same) pending?.update(fresh);
  }

  // Re-read whenever the organisation's state moves, so a kill or an edit made elsewhere shows here at once.
  const stop = ctx.live.follow(async () => {
    try {
      const fresh = await ctx.api.get<FlagView>(`/api/v1/flags/${encodeURIComponent(flagId)}`);
      await learnKeyNames(ctx.api, [fresh]);
      health.refresh(fresh);
      if (!flag) {
        flag = fresh;
        editor = envEditor(ctx, fresh, env, changed, () => pending?.update(flag ?? fresh));
        targeting = targetingPanel(ctx, fresh, env, changed);
        promote = mayPromoteInto(ctx, env) ? promotePanel(ctx, () => flag!, env, changed) : undefined;
        schedule = schedulePanel(ctx.api, fresh, env, changed);
        pending = pendingProposal(ctx.api, fresh, may(ctx, 'proposal.decide'));
        lifecycle = lifecyclePanel(ctx, fresh, changed);
        replace(
          body,
          // About the flag as a whole, not one environment: first.
          lifecycle.element,
          // Components about this environment's pending changes (e.g. a change proposal) mount here, above the editor.
          h('div', { class: 'env-notices', 'data-slot': 'env-notices' }, pending.element),
          editor.element,
          readOnlyUnless(ctx, 'config.update', targeting.element, 'variants, prerequisites or schedules'),
          readOnlyUnless(ctx, 'config.update', schedule.element, 'schedules'),
          promote,
          statsPanel(ctx, flagId, env),
          h(
            'p',
            null,
            h('a', { href: hrefOf({ name: 'audit', filters: { projectId: fresh.projectId, flagId } }) }, 'Audit log of this flag'),
          ),
        );
      }
      changed(fresh);
    } catch (err) {
      if (!flag) replace(top, h('p', { class: 'form-error' }, errorText(err)));
      throw err;
    }
  });

  const element = h('section', { class: 'page flag-page' }, crumbs, top, body);
  return { element, title: `Flag in ${env}`, dispose: stop };
}

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
