import { canonicalJson, type EnvironmentName } from '@flagops/core';
import { ApiError, errorText } from '../api.js';
import { h, replace } from '../dom.js';
import { draftMessages, type FieldSlot, hasMessages } from '../logic/draft-messages.js';
import { ago } from '../logic/text.js';
import { inputToValue, parseRollout } from '../logic/value-input.js';
import type { PageContext } from '../route.js';
import type { DraftResult, EnvironmentConfigView, FlagView, JsonValue } from '../types.js';
import { type ConfigForm, configForm, type FormTexts, textsOf } from './config-form.js';
import { confirmDialog } from './confirm-dialog.js';

const VALIDATE_DELAY_MS = 250;

interface Checked {
  ok: boolean;
  body: Record<string, JsonValue>;
}

/** The form texts parsed as far as the page can: a value or rollout that does not parse gets a local message. */
function parseTexts(
  kind: FlagView['kind'],
  texts: FormTexts,
): { config: Record<string, JsonValue>; local: Partial<Record<FieldSlot, string>> } {
  const config: Record<string, JsonValue> = { enabled: texts.enabled };
  const local: Partial<Record<FieldSlot, string>> = {};
  const rollout = parseRollout(texts.rolloutPct);
  if (rollout.ok) config.rolloutPct = rollout.value;
  else local.rolloutPct = rollout.message;
  for (const field of ['valueOn', 'valueOff'] as const) {
    const parsed = inputToValue(kind, texts[field]);
    if (parsed.ok) config[field] = parsed.value;
    else local[field] = parsed.message;
  }
  return { config, local };
}

export interface EnvEditor {
  element: HTMLElement;
  /** A newer flag arrived (polling, or another action on the page). */
  update(flag: FlagView): void;
}

/**
 * One environment's config: edit enabled, rollout, values and rules with live validation (the server's own
 * checks, through the dry-run endpoint), save with expectedVersion, kill and clear a kill.
 */
export function envEditor(ctx: PageContext, initial: FlagView, env: EnvironmentName, onChanged: (flag: FlagView) => void): EnvEditor {
  const kind = initial.kind;
  const flagPath = `/api/v1/flags/${encodeURIComponent(initial.id)}/environments/${env}`;
  let flag = initial;
  let base: EnvironmentConfigView = flag.environments[env];
  let baseTexts = textsOf(kind, base);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let sequence = 0;

  const killArea = h('div', { class: 'kill-area' });
  const notice = h('div', { class: 'notice-slot' });
  const status = h('span', { class: 'save-status', role: 'status' });
  const save = h('button', { type: 'button', class: 'primary', 'data-action': 'save' }, 'Save');
  const reset = h('button', { type: 'button', class: 'secondary' }, 'Discard changes');
  const version = h('span', { class: 'muted' });
  const form: ConfigForm = configForm(kind, () => {
    status.textContent = '';
    refreshButtons();
    clearTimeout(timer);
    timer = setTimeout(() => void check(), VALIDATE_DELAY_MS);
  });

  const dirty = () => canonicalJson(form.read()) !== canonicalJson(baseTexts);
  const refreshButtons = () => {
    save.disabled = !dirty();
    reset.disabled = !dirty();
  };
  const load = (config: EnvironmentConfigView) => {
    base = config;
    baseTexts = textsOf(kind, config);
    form.write(baseTexts);
    form.showMessages(draftMessages([]));
    replace(notice);
    version.textContent = `version ${config.version}`;
    refreshButtons();
  };

  /** Validates what the form holds now; null when a newer check started meanwhile. */
  const check = async (): Promise<Checked | null> => {
    const mine = ++sequence;
    const texts = form.read();
    const { config, local } = parseTexts(kind, texts);
    try {
      const result = await ctx.api.send<DraftResult>('POST', '/dashboard/api/validate-config', { kind, config, rulesYaml: texts.rules });
      if (mine !== sequence) return null;
      const messages = draftMessages(result.issues, local);
      form.showMessages(messages);
      return { ok: !hasMessages(messages) && result.rules !== null, body: { ...config, rules: result.rules as JsonValue } };
    } catch (err) {
      if (mine !== sequence) return null;
      form.showMessages(draftMessages([], { ...local, form: `could not check the config: ${errorText(err)}` }));
      return { ok: false, body: config };
    }
  };

  const showConflict = () =>
    replace(
      notice,
      h(
        'div',
        { class: 'conflict', role: 'alert' },
        h('strong', null, 'This config was changed meanwhile by someone else. '),
        'Your edits were not saved. Reload to see the current config, then make your change again. ',
        h('button', { type: 'button', class: 'secondary', 'data-action': 'reload', onclick: reload }, 'Reload'),
      ),
    );

  async function reload(): Promise<void> {
    try {
      const fresh = await ctx.api.get<FlagView>(`/api/v1/flags/${encodeURIComponent(flag.id)}`);
      flag = fresh;
      load(fresh.environments[env]);
      onChanged(fresh);
    } catch (err) {
      status.textContent = errorText(err);
    }
  }

  const applied = (fresh: FlagView, message: string) => {
    flag = fresh;
    load(fresh.environments[env]);
    status.textContent = message;
    onChanged(fresh);
  };

  save.addEventListener('click', async () => {
    clearTimeout(timer);
    save.disabled = true;
    status.textContent = 'Checking…';
    const checked = await check();
    if (!checked?.ok) {
      status.textContent = checked ? 'Fix the problems shown, then save.' : '';
      refreshButtons();
      return;
    }
    status.textContent = 'Saving…';
    try {
      applied(await ctx.api.send<FlagView>('PUT', `${flagPath}/config`, { ...checked.body, expectedVersion: base.version }), 'Saved.');
    } catch (err) {
      status.textContent = '';
      if (err instanceof ApiError && err.code === 'version_conflict') showConflict();
      else status.textContent = errorText(err);
      refreshButtons();
    }
  });
  reset.addEventListener('click', () => load(base));

  const kill = async () => {
    const { confirmed, text } = await confirmDialog({
      title: `Kill ${flag.key} in ${env}?`,
      body: h('p', null, `Every ${env} user gets the off value at once, whatever the rules and rollout say, until the kill is cleared.`),
      confirmLabel: `Kill in ${env}`,
      danger: true,
      input: { label: 'Reason (goes into the audit trail)', placeholder: 'error rate above 5%' },
    });
    if (!confirmed) return;
    try {
      applied(await ctx.api.send<FlagView>('POST', `${flagPath}/kill`, text === '' ? undefined : { reason: text }), `Killed in ${env}.`);
    } catch (err) {
      status.textContent = errorText(err);
    }
  };
  const clearKill = async () => {
    const { confirmed } = await confirmDialog({
      title: `Clear the kill of ${flag.key} in ${env}?`,
      body: h('p', null, `The normal config applies again in ${env}: enabled, rollout and rules as shown below.`),
      confirmLabel: 'Clear kill',
    });
    if (!confirmed) return;
    try {
      applied(await ctx.api.send<FlagView>('PUT', `${flagPath}/config`, { clearKill: true }), `Kill cleared in ${env}.`);
    } catch (err) {
      status.textContent = errorText(err);
    }
  };
  const renderKillArea = (config: EnvironmentConfigView) =>
    replace(
      killArea,
      config.killed
        ? [
            h('span', { class: 'kill-marker', 'aria-label': 'killed' }),
            h('strong', { class: 'killed-text' }, `Killed in ${env}`),
            ` by ${config.killedBy ?? 'unknown'}${config.killedAt ? `, ${ago(config.killedAt, Date.now())}` : ''}`,
            h('button', { type: 'button', class: 'secondary', 'data-action': 'clear-kill', onclick: clearKill }, 'Clear kill…'),
          ]
        : h('button', { type: 'button', class: 'danger', 'data-action': 'kill', onclick: kill }, `Kill in ${env}…`),
    );

  load(base);
  renderKillArea(base);
  const element = h(
    'section',
    { class: 'card editor', 'data-env': env },
    h('div', { class: 'card-head' }, h('h2', null, `Config in ${env}`), version, killArea),
    notice,
    form.element,
    h('div', { class: 'actions' }, save, reset, status),
  );
  return {
    element,
    update(fresh) {
      flag = fresh;
      const config = fresh.environments[env];
      renderKillArea(config);
      if (config.version === base.version) return;
      if (!dirty()) load(config);
      else
        replace(
          notice,
          h(
            'div',
            { class: 'conflict', role: 'alert' },
            h('strong', null, `Changed meanwhile: ${env} is now at version ${config.version}. `),
            'Saving your edits would be refused. ',
            h('button', { type: 'button', class: 'secondary', 'data-action': 'reload', onclick: reload }, 'Reload (drops your edits)'),
          ),
        );
    },
  };
}
