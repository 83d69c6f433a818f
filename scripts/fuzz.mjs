#!/usr/bin/env node
// npm run fuzz: the property tests of test/fuzz with many more runs than npm test gives them, from a random
// seed printed first. A failure replays with `FUZZ_SEED=<seed> npm run fuzz`; extra arguments go to vitest
// (`npm run fuzz -- yaml-reader` runs one file).
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const given = process.env.FUZZ_SEED;
if (given !== undefined && given !== '' && !Number.isSafeInteger(Number(given))) {
  console.error(`FUZZ_SEED must be an integer, got ${JSON.stringify(given)}`);
  process.exit(2);
}
const seed = given === undefined || given === '' ? String(randomInt(2 ** 31)) : given;
console.log(`fuzz seed ${seed} (replay: FUZZ_SEED=${seed} npm run fuzz)`);

const root = fileURLToPath(new URL('..', import.meta.url));
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const result = spawnSync(process.execPath, [vitest, 'run', '--config', 'vitest.fuzz.config.ts', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, FUZZ_SEED: seed, FLAGOPS_FUZZ: '1' },
});
if (result.error) throw result.error;
console.log(`fuzz seed ${seed}`);
process.exit(result.status ?? 1);
