import type { EnvironmentConfig, EnvironmentName } from '@flagops/core';
import { InvalidInputError, VersionConflictError } from '../../errors/kinds.js';
import { jsonEqual } from '../../repository/json-equal.js';
import { layout } from '../../repository/layout.js';
import { serializeRepositoryFile } from '../../repository/serialize-file.js';
import type { ConfigUpdateBody } from '../../validation/api-bodies.js';
import { pointerToField } from '../../validation/validate-body.js';
import { configValueKindIssues } from '../../validation/value-kind.js';
import { writeFlag } from '../flag-write.js';
import { type FlagView, servedFlagView } from '../flags/flag-view.js';
import type { Workspace } from '../http/workspace.js';
import { flagById } from '../state-lookup.js';
import { assignRuleIds } from './rule-ids.js';

const CONFIG_FIELDS = ['enabled', 'rolloutPct', 'valueOn', 'valueOff', 'rules'] as const;

/**
 * PUT .../config: the sent fields replace the current ones and the version goes up by one; a request that
 * changes nothing makes no commit. expectedVersion is compared inside the write, on the head it commits on.
 * With clearKill the kill is cleared after the config is written (two commits: the kill fast path owns
 * kills.yaml), so the moment the kill lifts the new config is already what serves.
 */
export async function updateConfig(ws: Workspace, flagId: string, env: EnvironmentName, body: ConfigUpdateBody): Promise<FlagView> {
  const { ref, view } = await writeFlag(ws, flagId, 'config_update', ({ project, flag }) => {
    const current = flag.environments[env];
    if (body.expectedVersion !== undefined && body.expectedVersion !== current.version) {
      throw new VersionConflictError(current.version, body.expectedVersion);
    }
    const kindIssue = configValueKindIssues(flag.meta.kind, body)[0];
    if (kindIssue) {
      const field = pointerToField(kindIssue.path ?? '');
      throw new InvalidInputError(`${field}: ${kindIssue.message}`, field);
    }
    const next: EnvironmentConfig = {
      enabled: body.enabled ?? current.enabled,
      rolloutPct: body.rolloutPct ?? current.rolloutPct,
      valueOn: 'valueOn' in body ? body.valueOn! : current.valueOn,
      valueOff: 'valueOff' in body ? body.valueOff! : current.valueOff,
      version: current.version + 1,
      rules: body.rules ? assignRuleIds(body.rules, current.rules) : current.rules,
    };
    const changed = CONFIG_FIELDS.filter((f) => !jsonEqual(next[f] as never, current[f] as never));
    if (changed.length === 0) return null;
    const key = flag.meta.key;
    return {
      changes: [
        { path: layout.configFile(project.project.slug, env, key), content: serializeRepositoryFile({ kind: 'config', value: next }) },
      ],
      summary: `update ${key} in ${env}: ${changed.join(', ')}`,
      environment: env,
    };
  });
  if (!body.clearKill) return view;
  await ws.deps.killSwitch.clear({
    org: ws.org,
    repo: ws.repo,
    projectSlug: ref.project.project.slug,
    flagKey: ref.flag.meta.key,
    environment: env,
    actor: ws.actor,
  });
  const served = await ws.repo.readServed();
  return servedFlagView(served, flagById(served.state, flagId));
}
