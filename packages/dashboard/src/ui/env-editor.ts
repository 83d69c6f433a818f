import { canonicalJson, type EnvironmentName } from '@flagops/core';
import { ApiError, errorText, ProposalKept } from '../api.js';
import { h, replace } from '../dom.js';
import { draftMessages, type FieldSlot, hasMessages } from '../logic/draft-messages.js';
import { reapplyFields, reapplyRules } from '../logic/reapply.js';
import { fieldOfMessage } from '../logic/rule-model.js';
import { rulesToYaml } from '../logic/rules-text.js';
import { when } from '../logic/text.js';
import { inputToValue, parseRollout, valueToInput } from '../logic/value-input.js';
import { may } from '../permissions.js';
import type { PageContext } from '../route.js';
import type { DraftIssue, DraftResult, EnvironmentConfigView, FlagView, JsonValue } from '../types.js';
import { actorNode } from './actor-names.js';
import { type ConfigForm, configForm, type FormTexts, textsOf } from './config-form.js';
import { confirmDialog } from './confirm-dialog.js';

const VALIDATE_DELAY_MS = 250;

interface Checked {
  /** The form texts this check was made for: Save may send it only while they are still what the form holds. */
  key: string;
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
  /** A newer flag arrived (a live update, or another action on the page). */
  update(flag: FlagView): void;
}

/**
 * One environment's config: enabled, rollout, values and the rules (rule builder and YAML, one draft) with
 * live validation by the server's own checks (the dry-run endpoint). Save is enabled only for a changed draft
 * the server accepted, and sends expectedVersion; a conflict offers to reapply the edits on the newer version.
 * Kill and clear a kill have their own area and their own messages.
 */
export function envEditor(
  ctx: PageContext,
  initial: FlagView,
  env: EnvironmentName,
  onChanged: (flag: FlagView) => void,
  /** A save was kept as a change proposal: the page shows it with the others waiting. */
  onProposed: () => void = () => {},
): EnvEditor {
  const kind = initial.kind;
  const flagPath = `/api/v1/flags/${encodeURIComponent(initial.id)}/environments/${env}`;
  let flag = initial;
  let base: EnvironmentConfigView = flag.environments[env];
  let baseTexts = textsOf(kind, base);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let sequence = 0;
  let checked: Checked | null = null;
  let saving = false;

  const killArea = h('div', { class: 'kill-area' });
  const killStatus = h('span', { class: 'kill-status', role: 'status' });
  const notServed = h('div', { class: 'not-served-slot' });
  const notice = h('div', { class: 'notice-slot' });
  const status = h('span', { class: 'save-status', role: 'status' });
  const save = h('button', { type: 'button', class: 'primary', 'data-action': 'save' }, 'Save');
  const reset = h('button', { type: 'button', class: 'secondary' }, 'Discard changes');
  const version = h('span', { class: 'muted' });
  const form: ConfigForm = configForm(kind, () => {
    status.textContent = '';
    checked = null;
    refreshButtons();
    clearTimeout(timer);
    timer = setTimeout(() => void check(), VALIDATE_DELAY_MS);
  });

  const keyOf = (texts: FormTexts) => canonicalJson(texts as never);
  const dirty = () => keyOf(form.read()) !== keyOf(baseTexts);
  const refreshButtons = () => {
    const ready = checked?.ok === true && checked.key === keyOf(form.read());
    save.disabled = saving || !dirty() || !ready;
    save.title = !dirty() ? 'Nothing to save' : ready ? '' : checked === null ? 'Checking…' : 'Fix the problems shown first';
    reset.disabled = saving || !dirty();
  };
  const load = (config: EnvironmentConfigView) => {
    base = config;
    baseTexts = textsOf(kind, config);
    form.write(baseTexts, config.rules);
    form.showMessages(draftMessages([]));
    checked = null;
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
      const variants = flag.environments[env].variants ?? null;
      const result = await ctx.api.send<DraftResult>('POST', '/dashboard/api/validate-config', {
        kind,
        config,
        rulesYaml: texts.rules,
        variants,
      });
      if (mine !== sequence) return null;
      const messages = draftMessages(result.issues, local);
      form.showMessages(messages);
      form.showCheck(result);
      checked = {
        key: keyOf(texts),
        ok: !hasMessages(messages) && result.rules !== null,
        body: { ...config, rules: result.rules as JsonValue },
      };
    } catch (err) {
      if (mine !== sequence) return null;
      form.showMessages(draftMessages([], { ...local, form: `could not check the config: ${errorText(err)}` }));
      checked = { key: keyOf(texts), ok: false, body: config };
    }
    refreshButtons();
    if (!checked.ok && dirty()) status.textContent = 'Fix the problems shown to save.';
    return checked;
  };

  /** A refused save (400) names its field: shown at that field, or at the rule's row. */
  const showRefusal = (err: ApiError) => {
    const named = fieldOfMessage(err.message);
    if (!named) {
      status.textContent = err.message;
      return;
    }
    const issue: DraftIssue = { field: named.field, message: named.message };
    form.showMessages(draftMessages([issue]));
    form.builder.showIssues([issue]);
    status.textContent = 'The server refused the change: see the message at the field.';
  };

  const showConflict = (message: string) =>
    replace(
      notice,
      h(
        'div',
        { class: 'conflict', role: 'alert' },
        h('strong', null, message),
        ' Nothing was overwritten. ',
        h(
          'button',
          { type: 'button', class: 'primary', 'data-action': 'reapply', onclick: () => void reapply() },
          'Reload and reapply my edits',
        ),
        ' ',
        h(
          'button',
          { type: 'button', class: 'secondary', 'data-action': 'reload', onclick: () => void reload() },
          'Discard my edits and reload',
        ),
      ),
    );

  const fetchFlag = () => ctx.api.get<FlagView>(`/api/v1/flags/${encodeURIComponent(flag.id)}`);

  async function reload(): Promise<void> {
    try {
      const fresh = await fetchFlag();
      flag = fresh;
      load(fresh.environments[env]);
      onChanged(fresh);
    } catch (err) {
      status.textContent = errorText(err);
    }
  }

  /** The person's edits, field by field and rule by rule, on top of the version someone else saved meanwhile. */
  async function reapply(): Promise<void> {
    const mine = form.read();
    const mineRules = form.builderRules();
    const startedFrom = { texts: baseTexts, rules: base.rules };
    try {
      const fresh = await fetchFlag();
      flag = fresh;
      const config = fresh.environments[env];
      const fields = reapplyFields(startedFrom.texts, mine, textsOf(kind, config));
      const rules = reapplyRules(startedFrom.rules, mineRules, config.rules);
      load(config);
      form.write({ ...fields, rules: rulesToYaml(rules) }, rules);
      onChanged(fresh);
      replace(
        notice,
        h(
          'div',
          { class: 'reapplied', role: 'status' },
          `Your edits are applied on version ${config.version}, which someone else saved meanwhile. Check them, then save.`,
        ),
      );
      refreshButtons();
      await check();
    } catch (err) {
      status.textContent = errorText(err);
    }
  }

  save.addEventListener('click', async () => {
    clearTimeout(timer);
    const ready = checked?.ok && checked.key === keyOf(form.read()) ? checked : await check();
    if (!ready?.ok) return;
    saving = true;
    refreshButtons();
    status.textContent = 'Saving…';
    try {
      const fresh = await ctx.api.send<FlagView>('PUT', `${flagPath}/config`, { ...ready.body, expectedVersion: base.version });
      const config = fresh.environments[env];
      flag = fresh;
      load(config);
      status.textContent = config.killed
        ? `Saved as version ${config.version}. Not served while the kill lasts.`
        : `Saved. Version ${config.version} is served in ${env}.`;
      onChanged(fresh);
    } catch (err) {
      status.textContent = '';
      if (err instanceof ProposalKept) {
        // The change is in the proposal now: the editor shows what is served again, and the page the proposal.
        load(base);
        status.textContent = err.message;
        onProposed();
      } else if (err instanceof ApiError && err.code === 'version_conflict')
        showConflict('Not saved: someone else changed this config meanwhile.');
      else if (err instanceof ApiError && err.code === 'invalid_input') showRefusal(err);
      else status.textContent = errorText(err);
    } finally {
      saving = false;
      refreshButtons();
    }
  });
  reset.addEventListener('click', () => {
    load(base);
    status.textContent = '';
  });

  const killed = async (run: () => Promise<FlagView>, message: string) => {
    killStatus.textContent = '';
    try {
      const fresh = await run();
      flag = fresh;
      onChanged(fresh);
      killStatus.textContent = message;
    } catch (err) {
      killStatus.textContent = errorText(err);
    }
  };
  const kill = async () => {
    const { confirmed, text } = await confirmDialog({
      title: `Kill ${flag.key} in ${env}?`,
      body: h('p', null, `Every ${env} user gets the off value at once, whatever the rules and rollout say, until the kill is cleared.`),
      confirmLabel: `Kill in ${env}`,
      danger: true,
      input: { label: 'Reason (goes into the audit trail)', placeholder: 'error rate above 5%' },
    });
    if (confirmed)
      await killed(() => ctx.api.send<FlagView>('POST', `${flagPath}/kill`, text === '' ? undefined : { reason: text }), 'Kill served.');
  };
  const clearKill = async () => {
    const { confirmed } = await confirmDialog({
      title: `Clear the kill of ${flag.key} in ${env}?`,
      body: h('p', null, `The config below applies again in ${env}: enabled, rules and rollout as shown.`),
      confirmLabel: 'Clear kill',
    });
    if (confirmed) await killed(() => ctx.api.send<FlagView>('PUT', `${flagPath}/config`, { clearKill: true }), 'Kill cleared.');
  };
  const renderKillState = (config: EnvironmentConfigView) => {
    replace(
      killArea,
      config.killed
        ? [
            h('span', { class: 'kill-marker', role: 'img', 'aria-label': 'killed' }),
            h('strong', { class: 'killed-text' }, `Killed in ${env}`),
            may(ctx, 'clear_kill')
              ? h('button', { type: 'button', class: 'secondary', 'data-action': 'clear-kill', onclick: clearKill }, 'Clear kill…')
              : null,
          ]
        : may(ctx, 'kill')
          ? h('button', { type: 'button', class: 'danger', 'data-action': 'kill', onclick: kill }, `Kill in ${env}…`)
          : null,
      killStatus,
    );
    element?.classList.toggle('is-killed', config.killed);
    replace(
      notServed,
      config.killed
        ? h(
            'div',
            { class: 'not-served', role: 'status' },
            h('strong', null, `Not served: this flag is killed in ${env}. `),
            `Everyone in ${env} gets the value served when off (${valueToInput(kind, config.valueOff)}), whatever the config below says. Killed by `,
            actorNode(config.killedBy ?? 'unknown'),
            config.killedAt ? h('span', { title: `${config.killedAt} (UTC)` }, ` ${when(config.killedAt, Date.now())}`) : null,
            config.killReason ? ` — ${config.killReason}` : null,
            '. You can still edit and save the config: it is served again once the kill is cleared.',
          )
        : null,
    );
  };

  const element: HTMLElement = h(
    'section',
    { class: 'card editor', 'data-env': env },
    h('div', { class: 'card-head' }, h('h2', null, `Config in ${env}`), version, killArea),
    notServed,
    notice,
    may(ctx, 'config.update') ? form.element : h('fieldset', { class: 'read-only', disabled: true }, form.element),
    may(ctx, 'config.update')
      ? h('div', { class: 'actions' }, save, reset, status)
      : h('p', { class: 'muted', 'data-slot': 'read-only' }, `Your role (${ctx.session.role ?? 'viewer'}) may not change configs.`),
  );
  load(base);
  renderKillState(base);
  const setChoices = (config: EnvironmentConfigView, segments: readonly string[]) =>
    form.builder.setChoices({ variants: (config.variants ?? []).map((v) => v.name), segments });
  let segmentKeys: string[] = [];
  setChoices(base, segmentKeys);
  ctx.api.get<{ segments: Array<{ key: string }> }>(`/api/v1/projects/${encodeURIComponent(initial.projectId)}/segments`).then(
    ({ segments }) => {
      segmentKeys = segments.map((s) => s.key);
      setChoices(flag.environments[env], segmentKeys);
    },
    () => undefined,
  );
  return {
    element,
    update(fresh) {
      const before = flag.environments[env];
      flag = fresh;
      const config = fresh.environments[env];
      renderKillState(config);
      if (canonicalJson((config.variants ?? []) as never) !== canonicalJson((before.variants ?? []) as never))
        setChoices(config, segmentKeys);
      if (config.version === base.version) return;
      if (!dirty()) {
        load(config);
        return;
      }
      showConflict(`Changed meanwhile: ${env} is now at version ${config.version}; saving your edits as they are would be refused.`);
    },
  };
}
