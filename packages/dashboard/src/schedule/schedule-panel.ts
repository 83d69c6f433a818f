import type { EnvironmentName, ScheduleStep } from '@flagops/core';
import { type Api, errorText } from '../api.js';
import { h, replace } from '../dom.js';
import type { FlagView } from '../types.js';
import { type GuardCheckView, localInputToUtc, timeline, withStep } from './schedule-model.js';

export interface SchedulePanel {
  element: HTMLElement;
  /** A newer flag: redraw the timeline (the forms keep what is typed in them). */
  update(flag: FlagView): void;
}

/**
 * The filled part of a step's bar. Its width is set through the CSSOM, which the page's
 * Content-Security-Policy (style-src 'self', no 'unsafe-inline') allows, where a style attribute is refused.
 */
function rolloutFill(pct: number, enabled: boolean): HTMLElement {
  const fill = h('span', { class: enabled ? 'timeline-fill' : 'timeline-fill off' });
  fill.style.width = `${pct}%`;
  return fill;
}

const EVERY_CHOICES = [
  ['1m', 'minute'],
  ['15m', '15 minutes'],
  ['1h', 'hour'],
  ['6h', '6 hours'],
  ['1d', 'day'],
] as const;

/**
 * The schedule of one flag in one environment: a timeline of the steps to come (the next one marked), a button
 * that cancels the rest, a progressive-rollout form (start, step, every, up to) and a form for one more step.
 * Self-contained: it is given the API, the flag and a callback for the flag each write answers.
 */
export function schedulePanel(api: Api, initial: FlagView, env: EnvironmentName, onChanged: (flag: FlagView) => void): SchedulePanel {
  let flag = initial;
  const path = (suffix: string) => `/api/v1/flags/${encodeURIComponent(flag.id)}/environments/${env}/${suffix}`;
  const list = h('div', { class: 'schedule-timeline', 'data-testid': 'schedule-timeline' });
  const status = h('p', { class: 'form-error', role: 'alert' });
  let confirming = false;
  /** The guard's last check, fetched whenever the timeline is drawn with a guarded step in it. */
  let check: GuardCheckView | null = null;
  let checkFetch = 0;

  const write = async (run: () => Promise<FlagView>) => {
    status.textContent = '';
    try {
      const fresh = await run();
      flag = fresh;
      onChanged(fresh);
      draw();
      return true;
    } catch (err) {
      status.textContent = errorText(err);
      return false;
    }
  };
  const putSchedule = (schedule: ScheduleStep[]) =>
    write(() => api.send<FlagView>('PUT', path('config'), { schedule, expectedVersion: flag.environments[env].version }));

  const cancelButton = h(
    'button',
    { type: 'button', class: 'secondary small danger', 'data-testid': 'schedule-cancel' },
    'Cancel remaining steps',
  );
  cancelButton.addEventListener('click', async () => {
    if (!confirming) {
      confirming = true;
      cancelButton.textContent = 'Click again to cancel every step';
      return;
    }
    confirming = false;
    cancelButton.textContent = 'Cancel remaining steps';
    await putSchedule([]);
  });

  function draw(): void {
    const config = flag.environments[env];
    const steps = config.schedule ?? [];
    if (steps.length === 0) {
      replace(list, h('p', { class: 'muted' }, `No scheduled changes in ${env}.`));
      return;
    }
    const entries = timeline(steps, config, Date.now(), check);
    if (steps.some((s) => s.guard)) void refreshCheck();
    replace(
      list,
      h(
        'ol',
        { class: 'timeline' },
        entries.map((entry) =>
          h(
            'li',
            { class: entry.next ? 'timeline-step next' : 'timeline-step', 'data-at': entry.at },
            h('span', { class: 'timeline-when', title: entry.at }, entry.when),
            h('span', { class: 'timeline-relative muted' }, entry.relative),
            h('span', { class: 'timeline-sets' }, entry.sets),
            h('span', { class: 'timeline-bar', 'aria-hidden': 'true' }, rolloutFill(entry.rolloutAfter, entry.enabledAfter)),
            entry.next ? h('span', { class: 'tag' }, 'next') : h('span'),
            entry.guard ? h('span', { class: 'timeline-guard muted', 'data-testid': 'step-guard' }, entry.guard) : null,
            entry.lastCheck
              ? h(
                  'span',
                  { class: entry.lastCheck.ok ? 'timeline-check' : 'timeline-check failing', 'data-testid': 'step-check' },
                  entry.lastCheck.text,
                )
              : null,
          ),
        ),
      ),
      cancelButton,
    );
  }

  /** Fetches the guard's last check and redraws with it; only the newest of overlapping fetches is drawn. */
  async function refreshCheck(): Promise<void> {
    const mine = ++checkFetch;
    try {
      const fresh = (await api.get<{ check: GuardCheckView | null }>(path('guard-check'))).check;
      if (mine !== checkFetch || JSON.stringify(fresh) === JSON.stringify(check)) return;
      check = fresh;
      if (!confirming) draw();
    } catch {
      // The timeline stands without it; the next update fetches again.
    }
  }

  const start = h('input', { type: 'number', min: 0, max: 100, step: 'any', value: 5, name: 'planStartPct', 'aria-label': 'Start at %' });
  const step = h('input', { type: 'number', min: 0.01, max: 100, step: 'any', value: 20, name: 'planStepPct', 'aria-label': 'Step %' });
  const every = h(
    'select',
    { name: 'planEvery', 'aria-label': 'Every' },
    EVERY_CHOICES.map(([value, label]) => h('option', { value, selected: value === '1h' }, label)),
  );
  const upTo = h('input', { type: 'number', min: 0, max: 100, step: 'any', value: 100, name: 'planMaxPct', 'aria-label': 'Up to %' });
  // An optional guard on every step of the plan: the PromQL query and the most it may read.
  const guardQuery = h('input', {
    type: 'text',
    name: 'planGuardQuery',
    'aria-label': 'Guard query (PromQL)',
    placeholder: 'PromQL, optional',
  });
  const guardMax = h('input', { type: 'number', step: 'any', name: 'planGuardMax', 'aria-label': 'Guard max' });
  const plan = h(
    'form',
    { class: 'schedule-plan', 'data-testid': 'rollout-plan' },
    h('strong', null, 'Progressive rollout: '),
    h('label', null, 'start now at ', start, ' %'),
    h('label', null, ', then + ', step, ' %'),
    h('label', null, ' every ', every),
    h('label', null, ' up to ', upTo, ' %'),
    h('label', null, '; stop if ', guardQuery),
    h('label', null, ' is above ', guardMax),
    ' ',
    h('button', { type: 'submit', class: 'small' }, 'Schedule rollout'),
  );
  plan.addEventListener('submit', async (event) => {
    event.preventDefault();
    await write(() =>
      api.send<FlagView>('POST', path('rollout-plan'), {
        startPct: Number(start.value),
        stepPct: Number(step.value),
        every: every.value,
        maxPct: Number(upTo.value),
        ...(guardQuery.value.trim() !== '' ? { guard: { query: guardQuery.value.trim(), max: Number(guardMax.value) } } : {}),
        expectedVersion: flag.environments[env].version,
      }),
    );
  });

  const at = h('input', { type: 'datetime-local', step: 1, name: 'stepAt', 'aria-label': 'At (local time)' });
  // Names and labels of their own: the config editor above has its `rolloutPct` and its `Enabled` checkbox.
  const stepPct = h('input', { type: 'number', min: 0, max: 100, step: 'any', name: 'stepRolloutPct', 'aria-label': 'Step rollout %' });
  const enabled = h(
    'select',
    { name: 'stepSwitch', 'aria-label': 'Switch the flag' },
    h('option', { value: '' }, 'unchanged'),
    h('option', { value: 'true' }, 'on'),
    h('option', { value: 'false' }, 'off'),
  );
  const single = h(
    'form',
    { class: 'schedule-step', 'data-testid': 'schedule-add' },
    h('strong', null, 'One step: '),
    h('label', null, 'at ', at),
    h('label', null, ' rollout ', stepPct, ' %'),
    h('label', null, ' flag ', enabled),
    ' ',
    h('button', { type: 'submit', class: 'small secondary' }, 'Add step'),
  );
  single.addEventListener('submit', async (event) => {
    event.preventDefault();
    const when = localInputToUtc(at.value);
    if (when === null) {
      status.textContent = 'Choose the date and time of the step.';
      return;
    }
    const set: ScheduleStep['set'] = {};
    if (stepPct.value !== '') set.rolloutPct = Number(stepPct.value);
    if (enabled.value !== '') set.enabled = enabled.value === 'true';
    if (Object.keys(set).length === 0) {
      status.textContent = 'A step sets the rollout, enabled, or both.';
      return;
    }
    if (await putSchedule(withStep(flag.environments[env].schedule ?? [], { at: when, set }))) single.reset();
  });

  draw();
  const element = h(
    'section',
    { class: 'panel schedule-panel', 'data-testid': `schedule-${env}` },
    h('h2', null, `Schedule in ${env}`),
    h(
      'p',
      { class: 'muted' },
      'Each step is applied when it falls due, as one commit by the scheduler; a step due while the flag is killed here is skipped. A guarded step is applied only while its metric holds; a failing guard kills the flag here and removes the remaining steps.',
    ),
    list,
    status,
    plan,
    single,
  );
  return {
    element,
    update(fresh) {
      flag = fresh;
      if (!confirming) draw();
    },
  };
}
