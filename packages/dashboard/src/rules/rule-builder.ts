import { h, replace } from '../dom.js';
import { emptyCondition, moveRule, newRule, placeOf } from '../logic/rule-model.js';
import type { DraftIssue, Rule } from '../types.js';
import { conditionRow } from './condition-row.js';

export interface RuleBuilder {
  element: HTMLElement;
  read(): Rule[];
  /** Shows these rules (from the server, or from the YAML text); fires no change. */
  write(rules: readonly Rule[]): void;
  /** Messages about the rules, each at the rule or condition row its field names; the rest above the list. */
  showIssues(issues: readonly DraftIssue[]): void;
  /** What rules can serve besides on and off, and the segments conditions can name. */
  setChoices(choices: { variants: readonly string[]; segments: readonly string[] }): void;
  /** While the YAML text cannot be read, the builder has nothing to show. */
  setUnreadable(message: string | null): void;
  setDisabled(disabled: boolean): void;
}

const copy = (rules: readonly Rule[]): Rule[] => JSON.parse(JSON.stringify(rules)) as Rule[];

/**
 * The targeting rules as cards of condition rows: add and remove rules and conditions, reorder rules by
 * dragging a card's handle or with its Move up / Move down buttons, set each rule's share and what it serves.
 * It edits the same draft as the YAML text beside it: every change is reported with `onChange`, and the text
 * the person types comes back through `write`.
 */
export function ruleBuilder(onChange: (rules: Rule[]) => void): RuleBuilder {
  let rules: Rule[] = [];
  let variants: readonly string[] = [];
  let segments: readonly string[] = [];
  let disabled = false;
  let issues: readonly DraftIssue[] = [];
  let dragging: number | null = null;
  const list = h('ol', { class: 'rule-list', 'aria-label': 'Rules, first match wins' });
  const general = h('ul', { class: 'field-messages', 'data-messages': 'rule-builder', hidden: true });
  const unreadable = h('p', { class: 'warning', hidden: true });
  const empty = h('p', { class: 'muted rules-empty' }, 'No rules: everyone gets the default rollout below.');
  const add = h('button', { type: 'button', class: 'secondary', 'data-action': 'add-rule', 'data-focus': 'add-rule' }, 'Add rule');

  const changed = (redraw: boolean, focus?: string) => {
    if (redraw) draw(focus);
    onChange(copy(rules));
  };
  add.addEventListener('click', () => {
    rules.push(newRule(rules));
    changed(true, `Rule ${rules.length} condition 1 attribute`);
  });

  const drawIssues = () => {
    for (const el of Array.from(list.querySelectorAll<HTMLElement>('[data-row-messages]'))) {
      el.replaceChildren();
      el.hidden = true;
    }
    const rest: string[] = [];
    for (const issue of issues) {
      const place = placeOf(issue.field);
      if (place === null) continue;
      const key = place.rule === null ? null : place.condition === null ? `${place.rule}` : `${place.rule}.${place.condition}`;
      const slot = key === null ? null : list.querySelector<HTMLElement>(`[data-row-messages="${key}"]`);
      const text = `${issue.field}: ${issue.message}`;
      if (!slot) {
        rest.push(text);
        continue;
      }
      slot.appendChild(h('li', null, text));
      slot.hidden = false;
    }
    replace(
      general,
      rest.map((m) => h('li', null, m)),
    );
    general.hidden = rest.length === 0;
  };

  const ruleCard = (rule: Rule, i: number): HTMLElement => {
    const name = `Rule ${i + 1}`;
    const description = h('input', {
      class: 'rule-description',
      value: rule.description ?? '',
      placeholder: 'what this rule is for (optional)',
      'aria-label': `${name} description`,
      'data-focus': `${name} description`,
    });
    description.addEventListener('input', () => {
      if (description.value === '') delete rule.description;
      else rule.description = description.value;
      changed(false);
    });
    const serve = h(
      'select',
      { 'aria-label': `${name} serves`, 'data-focus': `${name} serves` },
      h('option', { value: 'on' }, 'the on value'),
      h('option', { value: 'off' }, 'the off value'),
      variants.map((v) => h('option', { value: v }, `variant ${v}`)),
      rule.serve !== 'on' && rule.serve !== 'off' && !variants.includes(rule.serve)
        ? h('option', { value: rule.serve }, `variant ${rule.serve} (not in this config)`)
        : null,
    );
    serve.value = rule.serve;
    serve.addEventListener('change', () => {
      rule.serve = serve.value;
      changed(false);
    });
    const share = h('input', {
      class: 'mono narrow',
      inputmode: 'decimal',
      value: rule.rolloutPct === undefined ? '' : String(rule.rolloutPct),
      placeholder: '100',
      'aria-label': `${name} rollout % of matching users`,
      'data-focus': `${name} rollout`,
    });
    share.addEventListener('input', () => {
      const text = share.value.trim();
      if (text === '') delete rule.rolloutPct;
      else rule.rolloutPct = (Number.isFinite(Number(text)) ? Number(text) : text) as number;
      changed(false);
    });
    const move = (to: number, focus: string) => {
      rules = moveRule(rules, i, to);
      changed(true, focus);
    };
    rule.conditions ??= [];
    const conditions = rule.conditions;
    const card = h(
      'li',
      { class: 'rule-card', 'data-rule': i, 'aria-label': name },
      h(
        'div',
        { class: 'rule-head' },
        h('span', { class: 'drag-handle', title: 'Drag to reorder', 'aria-hidden': 'true' }, '⠿'),
        h('strong', null, name),
        description,
        h(
          'button',
          {
            type: 'button',
            class: 'icon-button',
            'aria-label': `Move rule ${i + 1} up`,
            'data-focus': `Rule ${i} up`,
            disabled: i === 0,
            onclick: () => move(i - 1, i - 1 === 0 ? `Rule 1 down` : `Rule ${i - 1} up`),
          },
          '↑',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'icon-button',
            'aria-label': `Move rule ${i + 1} down`,
            'data-focus': `Rule ${i + 1} down`,
            disabled: i === rules.length - 1,
            onclick: () => move(i + 1, i + 1 === rules.length - 1 ? `Rule ${rules.length} up` : `Rule ${i + 2} down`),
          },
          '↓',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'secondary small',
            'aria-label': `Remove rule ${i + 1}`,
            onclick: () => {
              rules.splice(i, 1);
              changed(true, 'add-rule');
            },
          },
          'Remove',
        ),
      ),
      h('p', { class: 'rule-when muted' }, conditions.length === 0 ? 'Matches everyone.' : 'When all of these hold:'),
      h(
        'ul',
        { class: 'conditions' },
        conditions.map((condition, j) =>
          conditionRow(i, j, condition, segments, {
            edited: (next) => {
              conditions[j] = next;
              changed(false);
            },
            replaced: (next) => {
              conditions[j] = next;
              rule.conditions = conditions;
              changed(true, document.activeElement?.getAttribute('data-focus') ?? undefined);
            },
            remove: () => {
              conditions.splice(j, 1);
              rule.conditions = conditions;
              changed(true, `Rule ${i + 1} add condition`);
            },
          }),
        ),
      ),
      h(
        'div',
        { class: 'rule-foot' },
        h(
          'button',
          {
            type: 'button',
            class: 'secondary small',
            'aria-label': `Add a condition to rule ${i + 1}`,
            'data-focus': `Rule ${i + 1} add condition`,
            onclick: () => {
              rule.conditions = [...conditions, emptyCondition()];
              changed(true, `Rule ${i + 1} condition ${rule.conditions.length} attribute`);
            },
          },
          'Add condition',
        ),
        h('label', { class: 'inline' }, 'Serve ', serve),
        h('label', { class: 'inline' }, 'to ', share, ' % of matching users'),
      ),
      h('ul', { class: 'field-messages row-messages', 'data-row-messages': `${i}`, hidden: true }),
    );
    // Dragging starts only from the handle, so selecting text in an input never drags the card.
    card.addEventListener('pointerdown', (event) => {
      card.draggable = !disabled && (event.target as HTMLElement).classList.contains('drag-handle');
    });
    card.addEventListener('dragstart', (event) => {
      dragging = i;
      event.dataTransfer?.setData('text/plain', name);
      card.classList.add('dragging');
    });
    card.addEventListener('dragend', () => {
      card.draggable = false;
      card.classList.remove('dragging');
      dragging = null;
    });
    card.addEventListener('dragover', (event) => {
      if (dragging === null || dragging === i) return;
      event.preventDefault();
      card.classList.add('drop-target');
    });
    card.addEventListener('dragleave', () => card.classList.remove('drop-target'));
    card.addEventListener('drop', (event) => {
      event.preventDefault();
      card.classList.remove('drop-target');
      if (dragging === null || dragging === i) return;
      const from = dragging;
      dragging = null;
      rules = moveRule(rules, from, i);
      changed(true);
    });
    return card;
  };

  function draw(focus?: string): void {
    replace(list, rules.map(ruleCard));
    empty.hidden = rules.length > 0;
    for (const el of Array.from(list.querySelectorAll<HTMLInputElement | HTMLButtonElement | HTMLSelectElement>('input, select, button'))) {
      if (disabled) el.disabled = true;
    }
    drawIssues();
    if (focus) (list.querySelector<HTMLElement>(`[data-focus="${focus}"]`) ?? (focus === 'add-rule' ? add : null))?.focus();
  }

  /** The focused control keeps its focus when the builder is drawn again (new choices, the YAML text re-read). */
  const focusedKey = () =>
    element.contains(document.activeElement) ? (document.activeElement?.getAttribute('data-focus') ?? undefined) : undefined;
  const element = h('div', { class: 'rule-builder' }, unreadable, empty, list, general, h('div', { class: 'rule-actions' }, add));
  return {
    element,
    read: () => copy(rules),
    write(next) {
      rules = copy(next);
      draw(focusedKey());
    },
    showIssues(next) {
      issues = next;
      drawIssues();
    },
    setChoices(choices) {
      variants = choices.variants;
      segments = choices.segments;
      draw(focusedKey());
    },
    setUnreadable(message) {
      unreadable.textContent = message ?? '';
      unreadable.hidden = message === null;
      list.classList.toggle('stale', message !== null);
    },
    setDisabled(value) {
      disabled = value;
      add.disabled = value;
      draw();
    },
  };
}
