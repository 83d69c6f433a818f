import { canonicalJson, type EnvironmentConfig, type EnvironmentName, type ProjectState } from '@flagops/core';
import { computeImpact } from '../proposals/impact.js';
import { countedPct, roundPct } from './budget-rules.js';

/**
 * The share of users a change of one flag's config in one environment counts against a budget: its impact's
 * `movedPct` (100 when not exact) and, when the change writes a schedule (a rollout plan is one), the impact of
 * each of its steps applied in turn, since scheduled steps never count when they are applied. At most 100: a
 * change cannot move more than every user.
 */
export function budgetedPct(
  before: ProjectState | undefined,
  after: ProjectState | undefined,
  flagKey: string,
  environment: EnvironmentName,
): number {
  const scope = { flagKey, environment };
  let pct = countedPct(computeImpact(before, after, scope)[0]);
  const written = after?.flags.get(flagKey)?.environments[environment];
  const previous = before?.flags.get(flagKey)?.environments[environment];
  const steps = written?.schedule ?? [];
  if (!after || !written || steps.length === 0 || canonicalJson(previous?.schedule ?? []) === canonicalJson(steps)) return pct;
  let from = after;
  let config: EnvironmentConfig = written;
  for (const step of steps) {
    if (pct >= 100) break;
    config = { ...config, enabled: step.set.enabled ?? config.enabled, rolloutPct: step.set.rolloutPct ?? config.rolloutPct };
    const to = withConfig(from, flagKey, environment, config);
    pct = roundPct(pct + countedPct(computeImpact(from, to, scope)[0]));
    from = to;
  }
  return Math.min(100, pct);
}

/** `project` with one flag's config in one environment replaced (the flag must be in it). */
export function withConfig(project: ProjectState, flagKey: string, environment: EnvironmentName, config: EnvironmentConfig): ProjectState {
  const flag = project.flags.get(flagKey)!;
  const changed = { ...flag, environments: { ...flag.environments, [environment]: config } };
  return { ...project, flags: new Map(project.flags).set(flagKey, changed) };
}
