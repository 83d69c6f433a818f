/** The sample-ratio check of a flag's stats (GET .../stats `sampleRatio`), in words for the stats panel. */

export interface SampleRatioView {
  variants: Array<{ name: string; weight: number; exposures: number; expected: number }>;
  total: number;
  pValue: number | null;
  mismatch: boolean;
}

export interface SampleRatioLine {
  /** `mismatch` is shown as a warning. */
  tone: 'mismatch' | 'ok' | 'waiting';
  text: string;
}

function pText(p: number): string {
  return p < 0.0001 ? 'p < 0.0001' : `p = ${p.toPrecision(2)}`;
}

/** One line: the verdict, the p-value, and per variant its exposures against what its weight predicts. */
export function sampleRatioLine(check: SampleRatioView | null): SampleRatioLine | null {
  if (check === null) return null;
  const arms = check.variants.map((v) => `${v.name} ${v.exposures} (${v.weight} %, expected ${Math.round(v.expected)})`).join(', ');
  if (check.pValue === null) return { tone: 'waiting', text: `Sample ratio: ${check.total} exposures so far, too few to check (${arms}).` };
  if (check.mismatch)
    return {
      tone: 'mismatch',
      text: `Sample-ratio mismatch (${pText(check.pValue)}): the exposures per variant do not fit the weights (${arms}). The split or the exposure logging is broken; the test's results cannot be trusted.`,
    };
  return { tone: 'ok', text: `Sample ratio fits the weights (${pText(check.pValue)}; ${arms}).` };
}
