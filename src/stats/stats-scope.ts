/**
 * The scope counts are kept under: one project environment of one organisation. Callers build it once
 * (per snapshot or per SDK key), not per evaluation, so the hot path concatenates no strings.
 */
export function statsScope(org: string, projectId: string, environment: string): string {
  return `${org}/${projectId}/${environment}`;
}
