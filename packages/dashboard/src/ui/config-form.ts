import { type Child, h } from '../dom.js';
import type { FieldSlot, SlotMessages } from '../logic/draft-messages.js';
import { rulesForBuilder } from '../logic/rule-model.js';
import { RULES_PLACEHOLDER, rulesToYaml } from '../logic/rules-text.js';
import { valueToInput } from '../logic/value-input.js';
import { type RuleBuilder, ruleBuilder } from '../rules/rule-builder.js';
import type { DraftResult, EnvironmentConfigView, FlagKind, Rule } from '../types.js';

/** The texts of the form: what the person typed, before any parsing. */
export interface FormTexts {
  enabled: boolean;
  rolloutPct: string;
  valueOn: string;
  valueOff: string;
  rules: string;
}

export function textsOf(kind: FlagKind, config: EnvironmentConfigView): FormTexts {
  return {
    enabled: config.enabled,
    rolloutPct: String(config.rolloutPct),
    valueOn: valueToInput(kind, config.valueOn),
    valueOff: valueToInput(kind, config.valueOff),
    rules: rulesToYaml(config.rules),
  };
}

export interface ConfigForm {
  element: HTMLElement;
  read(): FormTexts;
  /** The texts, and the rules they hold for the rule builder. */
  write(texts: FormTexts, rules: readonly Rule[]): void;
  showMessages(messages: SlotMessages): void;
  /** The server's answer for the draft: issues go to the builder's rows, and rules typed as YAML to its rows. */
  showCheck(result: DraftResult | null): void;
  /** The rules the builder shows now. */
  builderRules(): Rule[];
  builder: RuleBuilder;
  setDisabled(disabled: boolean): void;
}

/** A plain-language label with the YAML field it edits as secondary text: "Served when off · valueOff". */
export function fieldLabel(words: string, field: string): Child[] {
  return [words, h('span', { class: 'field-name mono' }, ` · ${field}`)];
}

function valueField(kind: FlagKind, name: string): HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement {
  if (kind === 'boolean') return h('select', { name }, h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
  if (kind === 'json') return h('textarea', { name, rows: 3, class: 'mono', spellcheck: 'false' });
  return h('input', { name, class: kind === 'number' ? 'mono' : '', inputmode: kind === 'number' ? 'decimal' : null });
}

/**
 * The inputs of an environment config; `onInput` fires on every change so the editor can validate live. The
 * rules are edited in two views of one draft: the rule builder's rows and the YAML text beside them. A change
 * in the rows rewrites the text; text the server could read comes back to the rows.
 */
export function configForm(kind: FlagKind, onInput: () => void): ConfigForm {
  const enabled = h('input', { type: 'checkbox', name: 'enabled' });
  const rollout = h('input', { name: 'rolloutPct', class: 'rollout-input mono', inputmode: 'decimal', size: 6, 'aria-label': 'Rollout %' });
  const slider = h('input', { type: 'range', min: 0, max: 100, step: 1, 'aria-label': 'Rollout slider' });
  const valueOn = valueField(kind, 'valueOn');
  const valueOff = valueField(kind, 'valueOff');
  const rules = h('textarea', {
    name: 'rules',
    rows: 14,
    class: 'mono rules-input',
    spellcheck: 'false',
    placeholder: RULES_PLACEHOLDER,
    'aria-label': 'Rules as YAML',
  });
  /** Which view of the rules the person edited last: rows come back from the text only when it was the text. */
  let editedInText = false;
  const builder = ruleBuilder((next) => {
    editedInText = false;
    rules.value = rulesToYaml(next);
    onInput();
  });
  rules.addEventListener('input', () => {
    editedInText = true;
  });
  const slots = {} as Record<FieldSlot, HTMLElement>;
  for (const slot of ['enabled', 'rolloutPct', 'valueOn', 'valueOff', 'rules', 'form'] as const) {
    slots[slot] = h('ul', { class: 'field-messages', 'data-messages': slot });
  }
  slider.addEventListener('input', () => {
    rollout.value = slider.value;
    onInput();
  });
  rollout.addEventListener('input', () => {
    if (rollout.value.trim() !== '' && Number.isFinite(Number(rollout.value))) slider.value = rollout.value;
  });
  const element = h(
    'div',
    { class: 'config-form' },
    h(
      'label',
      { class: 'check' },
      enabled,
      ' ',
      fieldLabel('Enabled', 'enabled'),
      h('span', { class: 'hint' }, ' — when off, everyone gets the value served when off'),
    ),
    slots.enabled,
    h(
      'fieldset',
      { class: 'rules-pane' },
      h(
        'legend',
        null,
        fieldLabel('Targeting rules', 'rules'),
        h('span', { class: 'hint' }, ' — checked in order; the first that applies wins'),
      ),
      h(
        'div',
        { class: 'rules-views' },
        builder.element,
        h('div', { class: 'rules-yaml' }, h('label', null, fieldLabel('The same rules as YAML', 'rules'), rules), slots.rules),
      ),
    ),
    h('label', null, fieldLabel('Everyone else: rollout %', 'rolloutPct'), h('span', { class: 'rollout-row' }, slider, rollout)),
    slots.rolloutPct,
    h(
      'div',
      { class: 'values' },
      h('label', null, fieldLabel('Served when on', 'valueOn'), valueOn, slots.valueOn),
      h('label', null, fieldLabel('Served when off', 'valueOff'), valueOff, slots.valueOff),
    ),
    slots.form,
  );
  // Checkboxes and selects fire `input` too; the slider and the rule builder report through their own listeners.
  element.addEventListener('input', (event) => {
    if (event.target === slider || builder.element.contains(event.target as Node)) return;
    onInput();
  });
  return {
    element,
    builder,
    read: () => ({
      enabled: enabled.checked,
      rolloutPct: rollout.value,
      valueOn: valueOn.value,
      valueOff: valueOff.value,
      rules: rules.value,
    }),
    write(texts, ruleList) {
      enabled.checked = texts.enabled;
      rollout.value = texts.rolloutPct;
      slider.value = texts.rolloutPct;
      valueOn.value = texts.valueOn;
      valueOff.value = texts.valueOff;
      rules.value = texts.rules;
      editedInText = false;
      builder.write(ruleList);
      builder.setUnreadable(null);
      builder.showIssues([]);
    },
    showMessages(messages) {
      for (const [slot, list] of Object.entries(messages) as Array<[FieldSlot, string[]]>) {
        slots[slot].replaceChildren(...list.map((m) => h('li', null, m)));
        slots[slot].hidden = list.length === 0;
      }
    },
    showCheck(result) {
      if (result === null) {
        builder.showIssues([]);
        return;
      }
      if (editedInText) {
        const rows = rulesForBuilder(result.parsedRules);
        if (rows !== null) builder.write(rows);
        builder.setUnreadable(
          rows === null ? 'The rows show the last rules that could be read: the YAML text cannot be read as rules (see below it).' : null,
        );
      }
      builder.showIssues(result.issues.filter((i) => i.field === 'rules' || i.field.startsWith('rules[')));
    },
    builderRules: () => builder.read(),
    setDisabled(disabled) {
      for (const input of [enabled, rollout, slider, valueOn, valueOff, rules]) input.disabled = disabled;
      builder.setDisabled(disabled);
    },
  };
}
