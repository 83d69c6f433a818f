import type { TestProject } from 'vitest/node';
import { buildDashboard } from '../scripts/build-dashboard.mjs';
import { CHROMIUM_MISSING } from './helpers/browser.js';
import { JQ_MISSING } from './helpers/jq.js';
import { POSTGRES_MISSING } from './helpers/postgres.js';
import { PROMETHEUS_MISSING } from './helpers/prometheus.mjs';
import { GO_MISSING, PYTHON_MISSING } from './helpers/sdk-tools.js';

/**
 * Runs once before any test file of a `vitest run`: builds the dashboard page into dist/dashboard-web, which
 * the browser tests drive through the service. Built here, once, because the test files run in parallel
 * processes: each building it itself meant five builds rewriting the same files while another file's browser
 * loaded them. Built on every run (and before every rerun in watch mode), so no test drives a stale page.
 */
export default async function setup(project: TestProject): Promise<void> {
  await buildDashboard();
  // Said once per run, not once per file that skips; CI installs PostgreSQL and runs them all.
  if (POSTGRES_MISSING) process.stderr.write(`\n${POSTGRES_MISSING}\n\n`);
  for (const missing of [CHROMIUM_MISSING, PYTHON_MISSING, GO_MISSING, PROMETHEUS_MISSING, JQ_MISSING])
    if (missing) process.stderr.write(`\n${missing}\n\n`);
  project.onTestsRerun(async () => {
    await buildDashboard();
  });
}
