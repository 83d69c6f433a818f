/**
 * How many runs each property gets, and from which seed.
 *
 * - `npm test`: a fixed seed and a few runs, so every machine runs the same cases and a red run is red
 *   everywhere.
 * - `npm run fuzz` (scripts/fuzz.mjs): FLAGOPS_FUZZ=1 and many more runs, from the seed in FUZZ_SEED, which
 *   the script draws at random and prints first. `FUZZ_SEED=<n> npm run fuzz` replays a failed run.
 *
 * FUZZ_SEED also works with `npx vitest run test/fuzz`, to replay a seed at the test's run counts.
 */
import type fc from 'fast-check';

const TEST_SEED = 20_250_611;

function seedFromEnvironment(): number {
  const text = process.env.FUZZ_SEED;
  if (text === undefined || text === '') return TEST_SEED;
  const seed = Number(text);
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${JSON.stringify(text)}`);
  return seed;
}

export const FUZZING = process.env.FLAGOPS_FUZZ === '1';
export const FUZZ_SEED = seedFromEnvironment();

/** fast-check parameters: `test` runs in npm test, `fuzz` runs in npm run fuzz, both from FUZZ_SEED. */
export function runs<T>(counts: { test: number; fuzz: number }): fc.Parameters<T> {
  return { seed: FUZZ_SEED, numRuns: FUZZING ? counts.fuzz : counts.test };
}
