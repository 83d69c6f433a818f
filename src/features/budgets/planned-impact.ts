import type { EnvironmentName, ProjectState } from '@flagops/core';
import { layout } from '../../foundations/repository/layout.js';
import { parseRepositoryFile } from '../../foundations/repository/parse-file.js';
import type { FileChange } from '../../foundations/storage/index.js';
import { computeImpact, type ImpactEntry } from '../proposals/impact.js';

/**
 * The impact a planned write of one flag's config in `environment` would have on `project` as it is: the
 * project with that config file replaced, compared by the function proposals use. Undefined when the write
 * does not change that config or changes nobody's variation.
 */
export function plannedImpact(
  project: ProjectState,
  changes: readonly FileChange[],
  flagKey: string,
  environment: EnvironmentName,
): ImpactEntry | undefined {
  const path = layout.configFile(project.project.slug, environment, flagKey);
  const change = changes.find((c) => c.path === path);
  const flag = project.flags.get(flagKey);
  if (!change || change.content === null || !flag) return undefined;
  const { file } = parseRepositoryFile(path, change.content);
  if (file?.kind !== 'config') return undefined;
  const flags = new Map(project.flags).set(flagKey, { ...flag, environments: { ...flag.environments, [environment]: file.value } });
  return computeImpact(project, { ...project, flags }, { flagKey, environment })[0];
}
