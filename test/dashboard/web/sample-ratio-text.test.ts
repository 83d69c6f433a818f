import { describe, expect, it } from 'vitest';
import { sampleRatioLine } from '../../../packages/dashboard/src/logic/sample-ratio-text.js';

const arms = (blue: number, green: number) => [
  { name: 'blue', weight: 50, exposures: blue, expected: (blue + green) / 2 },
  { name: 'green', weight: 50, exposures: green, expected: (blue + green) / 2 },
];

describe('the sample-ratio line of the stats panel', () => {
  it('warns of a mismatch with the p-value and each arm against its expectation', () => {
    const line = sampleRatioLine({ variants: arms(602, 401), total: 1003, pValue: 2.2e-10, mismatch: true });
    expect(line?.tone).toBe('mismatch');
    expect(line?.text).toContain('Sample-ratio mismatch (p < 0.0001)');
    expect(line?.text).toContain('blue 602 (50 %, expected 502)');
  });

  it('says the ratio fits, or that there are too few exposures yet, and nothing without a check', () => {
    expect(sampleRatioLine({ variants: arms(510, 490), total: 1000, pValue: 0.527, mismatch: false })).toEqual({
      tone: 'ok',
      text: 'Sample ratio fits the weights (p = 0.53; blue 510 (50 %, expected 500), green 490 (50 %, expected 500)).',
    });
    expect(sampleRatioLine({ variants: arms(3, 1), total: 4, pValue: null, mismatch: false })?.tone).toBe('waiting');
    expect(sampleRatioLine(null)).toBeNull();
  });
});
