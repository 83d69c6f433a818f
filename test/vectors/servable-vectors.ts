import type { FlagKind, KillsFile, SnapshotFlag } from '@flagops/core';
import { parseRepositoryFile } from '../../src/repository/parse-file.js';
import { projectFiles } from '../eval-server/harness.js';
import { loadVectors, type Vector } from '../evaluation/support.js';

export const vectors: Vector[] = loadVectors();

function kindOf(flag: SnapshotFlag): FlagKind {
  for (const kind of ['boolean', 'string', 'number'] as const) if (typeof flag.valueOn === kind && typeof flag.valueOff === kind) return kind;
  return 'json';
}

/**
 * The repository files that make project `slug` serve `vector` in prod: its one flag, killed or not. Each
 * vector gets a project of its own, as bucketing depends on the flag key.
 */
export function vectorProjectFiles(vector: Vector, slug: string) {
  const { flag, flagKey } = vector;
  if (flag === null) return projectFiles(slug, []);
  const killed = vector.killedKeys ? vector.killedKeys.includes(flagKey) : flag.killed;
  const kills: KillsFile = { kills: killed ? { [flagKey]: { killedAt: '2026-01-01T00:00:00.000Z', killedBy: 'vectors' } } : {} };
  const spec = {
    key: flagKey,
    kind: kindOf(flag),
    defaultValue: flag.defaultValue,
    archivedAt: flag.archived ? '2026-01-01T00:00:00.000Z' : null,
    enabled: flag.enabled,
    rolloutPct: flag.rolloutPct,
    valueOn: flag.valueOn,
    valueOff: flag.valueOff,
    rules: flag.rules,
  };
  return projectFiles(slug, [spec], { prod: kills });
}

/**
 * The vectors a server can serve, each with its project's files. Some vectors hold rule values of the wrong
 * type for their operator, or flag keys outside the key pattern (unicode bucketing), to pin the core's
 * behaviour; the schema refuses those at write time, so they cannot reach a server.
 */
export function servableVectors(slugPrefix: string) {
  return vectors
    .map((vector, i) => ({ vector, slug: `${slugPrefix}${i}`, files: vectorProjectFiles(vector, `${slugPrefix}${i}`) }))
    .filter(({ files }) => files.every((f) => parseRepositoryFile(f.path, f.content).issues.length === 0));
}
