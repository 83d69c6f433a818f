/**
 * The sample-ratio check of an A/B/n test: are the exposures per variant what the configured weights make
 * them? A chi-square goodness-of-fit test; a mismatch means the assignment or the exposure logging is broken
 * (a variant's exposures lost, a redirect dropping users), and the test's results cannot be trusted.
 */

/** A mismatch is called below this p-value: 1 in 1,000 healthy tests is flagged by chance. */
export const SAMPLE_RATIO_P_THRESHOLD = 0.001;
/** Fewer exposures than this (over the variants with a weight) are too few to judge: no verdict. */
export const SAMPLE_RATIO_MIN_EXPOSURES = 100;

export interface SampleRatioVariant {
  name: string;
  /** Configured weight, percent. */
  weight: number;
  exposures: number;
  /** Exposures the weights predict out of the total. */
  expected: number;
}

export interface SampleRatio {
  variants: SampleRatioVariant[];
  /** Exposures of the variants with a weight. */
  total: number;
  /** Null until `total` reaches SAMPLE_RATIO_MIN_EXPOSURES. */
  pValue: number | null;
  mismatch: boolean;
}

/**
 * The check for a config's variants and the exposures per variation; null when fewer than two variants have a
 * weight (nothing to compare). Variants with weight 0, and the fixed variations, take no part: a rule may serve
 * them by name, outside the split.
 */
export function sampleRatio(
  variants: ReadonlyArray<{ name: string; weight: number }> | undefined,
  exposures: ReadonlyMap<string, number>,
): SampleRatio | null {
  const weighted = (variants ?? []).filter((v) => v.weight > 0);
  if (weighted.length < 2) return null;
  const weightSum = weighted.reduce((sum, v) => sum + v.weight, 0);
  const total = weighted.reduce((sum, v) => sum + (exposures.get(v.name) ?? 0), 0);
  let chiSquare = 0;
  const rows = weighted.map((v) => {
    const observed = exposures.get(v.name) ?? 0;
    const expected = (total * v.weight) / weightSum;
    if (expected > 0) chiSquare += (observed - expected) ** 2 / expected;
    return { name: v.name, weight: v.weight, exposures: observed, expected };
  });
  if (total < SAMPLE_RATIO_MIN_EXPOSURES) return { variants: rows, total, pValue: null, mismatch: false };
  const pValue = chiSquareSurvival(chiSquare, weighted.length - 1);
  return { variants: rows, total, pValue, mismatch: pValue < SAMPLE_RATIO_P_THRESHOLD };
}

/** P(X ≥ x) for X chi-square distributed with `df` degrees of freedom: the regularized upper gamma Q(df/2, x/2). */
export function chiSquareSurvival(x: number, df: number): number {
  if (x <= 0) return 1;
  return upperGammaQ(df / 2, x / 2);
}

const EPS = 1e-14;
const MAX_ITERATIONS = 1000;

/** Regularized upper incomplete gamma Q(a, x): a series below a + 1, a continued fraction above (Numerical Recipes 6.2). */
function upperGammaQ(a: number, x: number): number {
  const lnPrefix = a * Math.log(x) - x - logGamma(a);
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < MAX_ITERATIONS; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * EPS) break;
    }
    return Math.max(0, 1 - sum * Math.exp(lnPrefix));
  }
  // Lentz's method for the continued fraction.
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < MAX_ITERATIONS; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) break;
  }
  return Math.min(1, Math.exp(lnPrefix) * h);
}

/** ln Γ(z) for z > 0 (Lanczos, g = 7, nine coefficients): about 15 significant digits. */
function logGamma(z: number): number {
  const g = 7;
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (z < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * z)) - logGamma(1 - z);
  const x = z - 1;
  let a = c[0];
  const t = x + g + 0.5;
  for (let i = 1; i < g + 2; i++) a += c[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}
