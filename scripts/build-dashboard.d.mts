/** Types of scripts/build-dashboard.mjs, for the tests that build the page before driving it. */
export function buildDashboard(options?: { outdir?: string; minify?: boolean }): Promise<{ outdir: string; bytes: number }>;
