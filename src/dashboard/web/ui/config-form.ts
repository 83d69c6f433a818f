import { h } from '../dom.js';
import type { FieldSlot, SlotMessages } from '../logic/draft-messages.js';
import { RULES_PLACEHOLDER, rulesToYaml } from '../logic/rules-text.js';
import { valueToInput } from '../logic/value-input.js';
import type { EnvironmentConfigView, FlagKind } from '../types.js';

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
  write(texts: FormTexts): void;
  showMessages(messages: SlotMessages): void;
  setDisabled(disabled: boolean): void;
}

function valueField(kind: FlagKind, name: string): HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement {
  if (kind === 'boolean') return h('select', { name }, h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
  if (kind === 'json') return h('textarea', { name, rows: 3, class: 'mono', spellcheck: 'false' });
  return h('input', { name, class: kind === 'number' ? 'mono' : '', inputmode: kind === 'number' ? 'decimal' : null });
}

/** The inputs of an environment config; `onInput` fires on every change so the editor can validate live. */
export function configForm(kind: FlagKind, onInput: () => void): ConfigForm {
  const enabled = h('input', { type: 'checkbox', name: 'enabled' });
  const rollout = h('input', { name: 'rolloutPct', class: 'rollout-input mono', inputmode: 'decimal', size: 6 });
  const slider = h('input', { type: 'range', min: 0, max: 100, step: 1, 'aria-label': 'Rollout slider' });
  const valueOn = valueField(kind, 'valueOn');
  const valueOff = valueField(kind, 'valueOff');
  const rules = h('textarea', { name: 'rules', rows: 10, class: 'mono rules-input', spellcheck: 'false', placeholder: RULES_PLACEHOLDER });
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
    h('label', { class: 'check' }, enabled, ' Enabled (serve by rules and rollout; off serves valueOff)'),
    slots.enabled,
    h('label', null, 'Rollout %', h('span', { class: 'rollout-row' }, slider, rollout)),
    slots.rolloutPct,
    h(
      'div',
      { class: 'values' },
      h('label', null, 'Value on', valueOn, slots.valueOn),
      h('label', null, 'Value off', valueOff, slots.valueOff),
    ),
    h('label', null, 'Rules (YAML, evaluated in order; the first that applies wins)', rules),
    slots.rules,
    slots.form,
  );
  // Checkboxes and selects fire `input` too; the slider reports through its own listener above.
  element.addEventListener('input', (event) => {
    if (event.target !== slider) onInput();
  });
  return {
    element,
    read: () => ({
      enabled: enabled.checked,
      rolloutPct: rollout.value,
      valueOn: valueOn.value,
      valueOff: valueOff.value,
      rules: rules.value,
    }),
    write(texts) {
      enabled.checked = texts.enabled;
      rollout.value = texts.rolloutPct;
      slider.value = texts.rolloutPct;
      valueOn.value = texts.valueOn;
      valueOff.value = texts.valueOff;
      rules.value = texts.rules;
    },
    showMessages(messages) {
      for (const [slot, list] of Object.entries(messages) as Array<[FieldSlot, string[]]>) {
        slots[slot].replaceChildren(...list.map((m) => h('li', null, m)));
        slots[slot].hidden = list.length === 0;
      }
    },
    setDisabled(disabled) {
      for (const input of [enabled, rollout, slider, valueOn, valueOff, rules]) input.disabled = disabled;
    },
  };
}
