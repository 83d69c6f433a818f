import type { EnvironmentName, ProjectState } from '@flagops/core';
import { layout } from '../../foundations/repository/layout.js';
import { parseRepositoryFile } from '../../foundations/repository/parse-file.js';
import type { FileChange } from '../../foundations/storage/index.js';
import { budgetedPct, withConfig } from './budgeted-pct.js';

/**
 * What a planned write of one flag's config in `environment` counts against a budget, on `project` as it is:
 * the project with that config file replaced, compared by budgetedPct. 0 when the write does not change that config.
 */
export function plannedBudgetedPct(
  project: ProjectState,
  changes: readonly FileChange[],
  flagKey: string,
  environment: EnvironmentName,
): number {
  const path = layout.configFile(project.project.slug, environment, flagKey);
  const change = changes.find((c) => c.path === path);
  if (!change || change.content === null || !project.flags.has(flagKey)) return 0;
  const { file } = parseRepositoryFile(path, change.content);
  if (file?.kind !== 'config') return 0;
  return budgetedPct(project, withConfig(project, flagKey, environment, file.value), flagKey, environment);
}
