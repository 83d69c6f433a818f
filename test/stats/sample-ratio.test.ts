import { describe, expect, it } from 'vitest';
import { chiSquareSurvival, SAMPLE_RATIO_MIN_EXPOSURES, sampleRatio } from '../../src/features/stats/sample-ratio.js';

const fifty = [
  { name: 'blue', weight: 50 },
  { name: 'green', weight: 50 },
];

describe('the chi-square survival function', () => {
  it.each([
    // Reference values: pchisq(x, df, lower.tail = FALSE), and for 3 and 4 degrees of freedom the closed forms.
    [3.841458820694124, 1, 0.05],
    [10.827566170662733, 1, 0.001],
    [5.991464547107979, 2, 0.05],
    [13.815510557964274, 2, 0.001],
    [16.26623619623813, 3, 0.001],
    [0.5, 4, 0.9735009788392561],
    [150, 3, 2.634913928488043e-32],
  ])('P(X >= %f) with %i degrees of freedom is %f', (x, df, p) => {
    expect(chiSquareSurvival(x, df) / p).toBeCloseTo(1, 3);
  });
});

describe('the sample-ratio check', () => {
  it('finds no mismatch in a 50/50 split served as configured', () => {
    const check = sampleRatio(
      fifty,
      new Map([
        ['blue', 5_030],
        ['green', 4_970],
      ]),
    );
    expect(check?.mismatch).toBe(false);
    expect(check?.pValue).toBeGreaterThan(0.5);
    expect(check?.variants).toEqual([
      { name: 'blue', weight: 50, exposures: 5_030, expected: 5_000 },
      { name: 'green', weight: 50, exposures: 4_970, expected: 5_000 },
    ]);
  });

  it('marks a mismatch when one arm lost exposures (p < 0.001)', () => {
    const check = sampleRatio(
      fifty,
      new Map([
        ['blue', 5_200],
        ['green', 4_800],
      ]),
    );
    expect(check?.mismatch).toBe(true);
    expect(check?.pValue).toBeLessThan(0.001);
  });

  it('weighs unequal splits and more than two arms', () => {
    const abc = [
      { name: 'a', weight: 20 },
      { name: 'b', weight: 30 },
      { name: 'c', weight: 50 },
    ];
    expect(
      sampleRatio(
        abc,
        new Map([
          ['a', 2_010],
          ['b', 2_990],
          ['c', 5_000],
        ]),
      )?.mismatch,
    ).toBe(false);
    expect(
      sampleRatio(
        abc,
        new Map([
          ['a', 3_000],
          ['b', 3_000],
          ['c', 4_000],
        ]),
      )?.mismatch,
    ).toBe(true);
  });

  it('gives no verdict below the minimum sample, and nothing for configs without two weighted variants', () => {
    const few = sampleRatio(fifty, new Map([['blue', SAMPLE_RATIO_MIN_EXPOSURES - 1]]));
    expect(few).toMatchObject({ pValue: null, mismatch: false, total: SAMPLE_RATIO_MIN_EXPOSURES - 1 });
    expect(sampleRatio(undefined, new Map([['on', 1_000]]))).toBeNull();
    expect(
      sampleRatio(
        [
          { name: 'only', weight: 100 },
          { name: 'never', weight: 0 },
        ],
        new Map([['only', 1_000]]),
      ),
    ).toBeNull();
  });

  it('leaves out variants with weight 0 and the fixed variations, which rules serve by name', () => {
    const withZero = [...fifty, { name: 'staff', weight: 0 }];
    const check = sampleRatio(
      withZero,
      new Map([
        ['blue', 500],
        ['green', 500],
        ['staff', 400],
        ['off', 900],
      ]),
    );
    expect(check).toMatchObject({ total: 1_000, mismatch: false });
    expect(check?.variants.map((v) => v.name)).toEqual(['blue', 'green']);
  });
});
