import type { FlagKind, KillsFile, SnapshotFlag } from '@flagops/core';
import { layout } from '../../src/foundations/repository/layout.js';
import { parseRepositoryFile } from '../../src/foundations/repository/parse-file.js';
import { readRepositoryFiles } from '../../src/foundations/repository/read-repository.js';
import { serializeRepositoryFile } from '../../src/foundations/repository/serialize-file.js';
import { projectFiles } from '../eval-server/harness.js';
import { loadVectors, type Vector, vectorFlags } from '../evaluation/support.js';

export const vectors: Vector[] = loadVectors();

/** The one kind all of a flag's values have, else json. */
function kindOf(flag: SnapshotFlag): FlagKind {
  const values = [flag.valueOn, flag.valueOff, ...(flag.variants ?? []).map((v) => v.value)];
  for (const kind of ['boolean', 'string', 'number'] as const) if (values.every((value) => typeof value === kind)) return kind;
  return 'json';
}

/**
 * The repository files that make project `slug` serve `vector` in prod: its flag and the other flags it names,
 * killed or not, and its segments. Each vector gets a project of its own, as bucketing depends on the flag key.
 */
export function vectorProjectFiles(vector: Vector, slug: string) {
  const flags = vectorFlags(vector);
  const killed = (key: string) => (vector.killedKeys ? vector.killedKeys.includes(key) : flags[key].killed);
  const kills: KillsFile = { kills: {} };
  for (const key of Object.keys(flags))
    if (killed(key)) kills.kills[key] = { killedAt: '2026-01-01T00:00:00.000Z', killedBy: 'vectors' };
  const specs = Object.entries(flags).map(([key, flag]) => ({
    key,
    kind: kindOf(flag),
    defaultValue: flag.defaultValue,
    archivedAt: flag.archived ? '2026-01-01T00:00:00.000Z' : null,
    enabled: flag.enabled,
    rolloutPct: flag.rolloutPct,
    valueOn: flag.valueOn,
    valueOff: flag.valueOff,
    rules: flag.rules,
    variants: flag.variants,
    prerequisites: flag.prerequisites,
  }));
  const files = projectFiles(slug, specs, { prod: kills });
  for (const [key, segment] of Object.entries(vector.segments ?? {})) {
    const value = { key, version: 1, userIds: segment.userIds, conditions: segment.conditions };
    files.push({ path: layout.segmentFile(slug, key), content: serializeRepositoryFile({ kind: 'segment', value }) });
  }
  return files;
}

/**
 * The vectors a server can serve, each with its project's files. Some vectors hold rule values of the wrong
 * type for their operator, flag keys outside the key pattern (unicode bucketing), or an unknown segment or
 * prerequisite flag, to pin the core's behaviour; the repository refuses those, so they cannot reach a server.
 */
export function servableVectors(slugPrefix: string) {
  return vectors
    .map((vector, i) => ({ vector, slug: `${slugPrefix}${i}`, files: vectorProjectFiles(vector, `${slugPrefix}${i}`) }))
    .filter(({ files }) => files.every((f) => parseRepositoryFile(f.path, f.content).issues.length === 0))
    .filter(({ files }) => readRepositoryFiles(files.map((f) => ({ path: f.path, text: f.content })), null).issues.length === 0);
}
