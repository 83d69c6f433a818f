import { availableParallelism } from 'node:os';
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
    // expect.poll waits for an outcome (a page drawn, a change served); it measures nothing, and a busy two-core
    // machine running two files at once answers a sign-in (a password hash) later than vitest's default of 1 s.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // Two files at once at least: most of a file's time is spent waiting on the processes it starts (services,
    // PostgreSQL, git), and vitest's default (one fewer than the cores) runs them one at a time on two cores.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
