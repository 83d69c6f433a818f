import { defineConfig } from 'vitest/config';
import { sourceAliases } from './scripts/package-sources.mjs';

export default defineConfig({
  // Tests run the @flagops packages from their sources, never from a build that may be stale.
  resolve: { alias: sourceAliases() },
  test: {
    include: ['test/**/*.test.ts'],
    // Builds what tests need from the sources once per run, before any test file starts.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
