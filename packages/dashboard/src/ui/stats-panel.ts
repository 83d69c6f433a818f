import { errorText } from '../api.js';
import { h, replace } from '../dom.js';
import { type ChartBox, chartModel } from '../logic/chart-model.js';
import { type SampleRatioView, sampleRatioLine } from '../logic/sample-ratio-text.js';
import type { PageContext } from '../route.js';
import type { EnvironmentName, StatsPeriod, StatsPoint } from '../types.js';
import { statsChart, variationColor } from './stats-chart.js';

const BOX: ChartBox = { width: 760, height: 220, left: 48, right: 12, top: 12, bottom: 28 };
const PERIODS: StatsPeriod[] = ['24h', '7d', '30d'];

/** Evaluations per hour and variation in one environment (`GET .../stats`), for 24 h, 7 or 30 days. */
export function statsPanel(ctx: PageContext, flagId: string, env: EnvironmentName): HTMLElement {
  let period: StatsPeriod = '24h';
  const chart = h('div', { class: 'chart-slot' }, h('p', { class: 'muted' }, 'Loading…'));
  const legend = h('div', { class: 'legend' });
  const exposures = h('p', { class: 'hint exposures' });
  const ratio = h('p', { class: 'sample-ratio' });
  const buttons = PERIODS.map((p) => h('button', { type: 'button', class: 'segment', 'data-period': p, onclick: () => load(p) }, p));

  const load = async (next: StatsPeriod) => {
    period = next;
    for (const b of buttons) b.classList.toggle('active', b.dataset.period === period);
    try {
      const { series, sampleRatio } = await ctx.api.get<{ series: StatsPoint[]; sampleRatio?: SampleRatioView | null }>(
        `/api/v1/flags/${encodeURIComponent(flagId)}/environments/${env}/stats?period=${period}`,
      );
      if (next !== period) return; // another period was chosen meanwhile
      const model = chartModel(series, period, BOX);
      replace(chart, statsChart(model, BOX));
      const sums = new Map<string, number>();
      for (const point of series) for (const [name, n] of Object.entries(point.variations)) sums.set(name, (sums.get(name) ?? 0) + n);
      replace(
        legend,
        model.total === 0
          ? h('span', { class: 'muted' }, `No evaluations in ${env} during the last ${period}.`)
          : model.variations.map((v) =>
              h(
                'span',
                { class: 'legend-item' },
                h('span', { class: 'swatch', 'data-color': variationColor(v, model.variations) }),
                `${v}: ${sums.get(v) ?? 0}`,
              ),
            ),
      );
      const exposed = new Map<string, number>();
      for (const point of series)
        for (const [name, n] of Object.entries(point.exposures ?? {})) exposed.set(name, (exposed.get(name) ?? 0) + n);
      exposures.textContent =
        exposed.size === 0 ? '' : `Exposures (events sent by SDKs): ${[...exposed].map(([name, n]) => `${name}: ${n}`).join(', ')}.`;
      const line = sampleRatioLine(sampleRatio ?? null);
      ratio.textContent = line?.text ?? '';
      ratio.dataset.tone = line?.tone ?? '';
      ratio.hidden = line === null;
      // The swatch colour comes from the data, set through the CSSOM: the page's CSP allows no inline style attribute.
      legend.querySelectorAll<HTMLElement>('.swatch').forEach((swatch) => {
        swatch.style.background = swatch.dataset.color ?? '';
      });
    } catch (err) {
      replace(chart, h('p', { class: 'form-error' }, errorText(err)));
    }
  };
  void load(period);

  return h(
    'section',
    { class: 'card stats' },
    h(
      'div',
      { class: 'card-head' },
      h('h2', null, `Evaluations in ${env}`),
      h('div', { class: 'segments' }, buttons, h('button', { type: 'button', class: 'segment', onclick: () => load(period) }, '↻')),
    ),
    chart,
    legend,
    exposures,
    ratio,
    h('p', { class: 'hint' }, 'Hourly counts per variation, UTC hours.'),
  );
}
