import { h } from '../dom.js';
import {
  addChips,
  type ConditionOp,
  isSegmentOp,
  numberOrText,
  OPERATOR_GROUPS,
  operatorChoice,
  type ScalarType,
  scalarOf,
  scalarTypeOf,
  withOperator,
} from '../logic/rule-model.js';
import type { Condition, JsonValue } from '../types.js';

export interface ConditionEvents {
  /** The value or attribute changed: the builder re-reads, nothing is redrawn (focus stays). */
  edited(next: Condition): void;
  /** The operator changed or a chip came or went: the row is drawn anew. */
  replaced(next: Condition): void;
  remove(): void;
}

/** `Rule 2 condition 1`: how every control of a row is named for screen readers and tests. */
const nameOf = (rule: number, condition: number) => `Rule ${rule + 1} condition ${condition + 1}`;

function operatorSelect(label: string, op: ConditionOp): HTMLSelectElement {
  const select = h(
    'select',
    { class: 'op-select', 'aria-label': `${label} operator`, 'data-focus': `${label} operator` },
    OPERATOR_GROUPS.map((group) =>
      h(
        'optgroup',
        { label: group.label },
        group.choices.map((c) => h('option', { value: c.op }, c.words)),
      ),
    ),
  );
  select.value = op;
  return select;
}

/** The condition as edited so far: every edit starts from it, so typing the value after the attribute keeps both. */
interface Current {
  condition: Condition;
}

function chipsEditor(label: string, members: JsonValue[], events: ConditionEvents, now: Current): HTMLElement {
  const input = h('input', {
    class: 'chip-input',
    'aria-label': `${label} values`,
    'data-focus': `${label} values`,
    placeholder: members.length === 0 ? 'type a value, Enter to add' : 'add…',
  });
  const commit = () => {
    if (input.value.trim() === '') return;
    events.replaced({ ...now.condition, value: addChips(members, input.value) });
  };
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ',') {
      event.preventDefault();
      commit();
    } else if (event.key === 'Backspace' && input.value === '' && members.length > 0) {
      events.replaced({ ...now.condition, value: members.slice(0, -1) });
    }
  });
  input.addEventListener('change', commit);
  return h(
    'span',
    { class: 'chips', role: 'group', 'aria-label': `${label} values` },
    members.map((member, i) =>
      h(
        'span',
        { class: 'chip' },
        typeof member === 'string' ? member : JSON.stringify(member),
        h(
          'button',
          {
            type: 'button',
            class: 'chip-remove',
            'aria-label': `Remove ${String(member)}`,
            onclick: () => events.replaced({ ...now.condition, value: members.filter((_, k) => k !== i) }),
          },
          '×',
        ),
      ),
    ),
    input,
  );
}

function valueEditor(label: string, now: Current, segments: readonly string[], events: ConditionEvents): HTMLElement {
  const condition = now.condition;
  const set = (value: JsonValue) => events.edited({ ...now.condition, value });
  const text = (attrs: Record<string, string>, toValue: (s: string) => JsonValue) => {
    const value = condition.value;
    const input = h('input', {
      value: typeof value === 'string' ? value : JSON.stringify(value),
      'aria-label': `${label} value`,
      'data-focus': `${label} value`,
      ...attrs,
    });
    input.addEventListener('input', () => set(toValue(input.value)));
    return input;
  };
  switch (operatorChoice(condition.op).editor) {
    case 'list':
      return chipsEditor(label, Array.isArray(condition.value) ? condition.value : [], events, now);
    case 'number':
      return text({ inputmode: 'decimal', class: 'mono narrow', placeholder: '18' }, numberOrText);
    case 'version':
      return text({ class: 'mono narrow', placeholder: '1.4.0', 'aria-label': `${label} version` }, (s) => s.trim());
    case 'text':
      return text({ placeholder: 'text' }, (s) => s);
    case 'segment': {
      const current = typeof condition.value === 'string' ? condition.value : '';
      const keys = current !== '' && !segments.includes(current) ? [current, ...segments] : segments;
      const select = h(
        'select',
        { 'aria-label': `${label} segment`, 'data-focus': `${label} segment` },
        h('option', { value: '' }, keys.length === 0 ? 'no segments yet' : 'choose a segment'),
        keys.map((key) => h('option', { value: key }, key)),
      );
      select.value = current;
      select.addEventListener('change', () => set(select.value));
      return select;
    }
    default: {
      const type = scalarTypeOf(condition.value);
      const kind = h(
        'select',
        { class: 'scalar-type', 'aria-label': `${label} value type`, 'data-focus': `${label} value type` },
        h('option', { value: 'text' }, 'text'),
        h('option', { value: 'number' }, 'number'),
        h('option', { value: 'boolean' }, 'true/false'),
      );
      kind.value = type;
      kind.addEventListener('change', () => {
        const next = kind.value as ScalarType;
        const was = now.condition.value;
        const seed = next === 'boolean' ? 'true' : typeof was === 'boolean' ? '' : String(was ?? '');
        events.replaced({ ...now.condition, value: scalarOf(next, seed) });
      });
      const input =
        type === 'boolean'
          ? h(
              'select',
              { 'aria-label': `${label} value`, 'data-focus': `${label} value` },
              h('option', { value: 'true' }, 'true'),
              h('option', { value: 'false' }, 'false'),
            )
          : text({ placeholder: type === 'number' ? '42' : 'value' }, (s) => scalarOf(type, s));
      if (type === 'boolean') {
        input.value = String(condition.value);
        input.addEventListener('change', () => set((input as HTMLSelectElement).value === 'true'));
      }
      return h('span', { class: 'scalar' }, kind, input);
    }
  }
}

/** One condition of a rule as a row: attribute, operator (grouped by the value it compares), and a value editor that fits. */
export function conditionRow(
  rule: number,
  index: number,
  condition: Condition,
  segments: readonly string[],
  events: ConditionEvents,
): HTMLElement {
  const label = nameOf(rule, index);
  const now: Current = { condition };
  const tracked: ConditionEvents = {
    edited: (next) => {
      now.condition = next;
      events.edited(next);
    },
    replaced: events.replaced,
    remove: events.remove,
  };
  const op = operatorSelect(label, condition.op);
  op.addEventListener('change', () => events.replaced(withOperator(now.condition, op.value as ConditionOp)));
  let attribute: HTMLElement;
  if (isSegmentOp(condition.op)) attribute = h('span', { class: 'attribute-none muted' }, 'the user');
  else {
    const input = h('input', {
      class: 'attribute mono',
      value: condition.attribute ?? '',
      placeholder: 'attribute',
      'aria-label': `${label} attribute`,
      'data-focus': `${label} attribute`,
      list: 'attribute-suggestions',
    });
    input.addEventListener('input', () => tracked.edited({ ...now.condition, attribute: input.value }));
    attribute = input;
  }
  return h(
    'li',
    { class: 'condition-row', 'data-rule': rule, 'data-condition': index },
    h(
      'div',
      { class: 'condition-controls' },
      attribute,
      op,
      valueEditor(label, now, segments, tracked),
      h(
        'button',
        {
          type: 'button',
          class: 'icon-button',
          'aria-label': `Remove condition ${index + 1} of rule ${rule + 1}`,
          'data-focus': `${label} remove`,
          onclick: events.remove,
        },
        '×',
      ),
    ),
    h('ul', { class: 'field-messages row-messages', 'data-row-messages': `${rule}.${index}`, hidden: true }),
  );
}
