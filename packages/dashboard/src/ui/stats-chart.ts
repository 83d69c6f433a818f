import { svg } from '../dom.js';
import type { ChartBox, ChartModel } from '../logic/chart-model.js';

const PALETTE: Readonly<Record<string, string>> = { on: '#2e7d32', off: '#9e9e9e', default: '#1565c0' };
const EXTRA = ['#6a1b9a', '#ef6c00', '#00838f', '#ad1457', '#558b2f'];

/** The colour of a variation: fixed for on, off and default, then a small palette in order. */
export function variationColor(variation: string, order: string[]): string {
  return PALETTE[variation] ?? EXTRA[order.filter((v) => !(v in PALETTE)).indexOf(variation) % EXTRA.length] ?? '#455a64';
}

/** The chart as inline SVG: axes, grid lines, stacked bars with a tooltip each. No chart library. */
export function statsChart(model: ChartModel, box: ChartBox): SVGElement {
  const right = box.width - box.right;
  const bottom = box.height - box.bottom;
  return svg(
    'svg',
    {
      class: 'stats-chart',
      viewBox: `0 0 ${box.width} ${box.height}`,
      width: box.width,
      height: box.height,
      role: 'img',
      'aria-label': 'Evaluations per hour',
    },
    model.ticks.map((t) => [
      svg('line', { x1: box.left, x2: right, y1: t.y, y2: t.y, class: 'grid-line' }),
      svg('text', { x: box.left - 6, y: t.y + 4, 'text-anchor': 'end', class: 'axis-label' }, String(t.value)),
    ]),
    model.labels.map((l) => [
      svg('line', { x1: l.x, x2: l.x, y1: bottom, y2: bottom + 4, class: 'axis-line' }),
      svg('text', { x: l.x, y: bottom + 16, 'text-anchor': 'middle', class: 'axis-label' }, l.text),
    ]),
    svg('line', { x1: box.left, x2: right, y1: bottom, y2: bottom, class: 'axis-line' }),
    model.bars.map((b) =>
      svg(
        'rect',
        {
          x: b.x.toFixed(2),
          y: b.y.toFixed(2),
          width: b.width.toFixed(2),
          height: Math.max(0.5, b.height).toFixed(2),
          fill: variationColor(b.variation, model.variations),
          'data-variation': b.variation,
        },
        svg('title', null, `${b.hour.slice(0, 13).replace('T', ' ')}:00 UTC — ${b.variation}: ${b.count}`),
      ),
    ),
  );
}
