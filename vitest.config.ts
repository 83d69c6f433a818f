import { defineConfig } from 'vitest/config';
import { sourceAliases } from './scripts/package-sources.mjs';

export default defineConfig({
  // Tests run the @flagops packages from their sources, never from a build that may be stale.
  resolve: { alias: sourceAliases() },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
