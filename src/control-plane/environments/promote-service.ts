import type { EnvironmentConfig, EnvironmentName } from '@flagops/core';
import { InvalidInputError } from '../../errors/kinds.js';
import { layout } from '../../repository/layout.js';
import { serializeRepositoryFile } from '../../repository/serialize-file.js';
import { writeFlag } from '../flag-write.js';
import type { FlagView } from '../flags/flag-view.js';
import type { Workspace } from '../http/workspace.js';

/**
 * Replaces the destination's whole config by the source's (contract §2: a file copy), version = destination's
 * + 1. Always one commit, even when the two are equal already: a promotion is a deploy, and every deploy is
 * in the audit trail. The destination's kill state is not part of the config and stays as it is.
 */
export async function promoteFlag(ws: Workspace, flagId: string, to: EnvironmentName, from: EnvironmentName): Promise<FlagView> {
  if (from === to) throw new InvalidInputError(`fromEnv: must differ from the destination environment ${to}`, 'fromEnv');
  const { view } = await writeFlag(ws, flagId, 'promote', ({ project, flag }) => {
    const source = flag.environments[from];
    const next: EnvironmentConfig = {
      enabled: source.enabled,
      rolloutPct: source.rolloutPct,
      valueOn: source.valueOn,
      valueOff: source.valueOff,
      version: flag.environments[to].version + 1,
      rules: source.rules,
    };
    const key = flag.meta.key;
    return {
      changes: [
        { path: layout.configFile(project.project.slug, to, key), content: serializeRepositoryFile({ kind: 'config', value: next }) },
      ],
      summary: `promote ${key} from ${from} to ${to}`,
      environment: to,
      fromEnvironment: from,
    };
  });
  return view;
}
