import { defineConfig } from 'vitest/config';
import { sourceAliases } from './scripts/package-sources.mjs';

// npm run fuzz (scripts/fuzz.mjs): only the property tests, with no time limit per test, since a run of
// thousands of cases takes minutes; the properties bound every request they send, so a hang still fails.
export default defineConfig({
  resolve: { alias: sourceAliases() },
  test: {
    include: ['test/fuzz/**/*.test.ts'],
    testTimeout: 0,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
