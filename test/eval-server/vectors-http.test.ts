import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvaluationContext, EvaluationResult, FlagKind, JsonValue, KillsFile, SnapshotFlag } from '../../src/model/index.js';
import { parseRepositoryFile } from '../../src/repository/parse-file.js';
import { commitFiles, type EvalHarness, evaluate, projectFiles, sdkKey, startHarness } from './harness.js';

interface Vector {
  name: string;
  flagKey: string;
  flag: SnapshotFlag | null;
  context: EvaluationContext;
  killedKeys?: string[];
  expected: EvaluationResult;
}

const vectors: Vector[] = JSON.parse(readFileSync(new URL('../vectors/evaluation.json', import.meta.url), 'utf8')).cases;

function kindOf(a: JsonValue, b: JsonValue): FlagKind {
  for (const kind of ['boolean', 'string', 'number'] as const) if (typeof a === kind && typeof b === kind) return kind;
  return 'json';
}

/** Each vector becomes a project of its own (bucketing depends on the flag key, so keys must stay as they are). */
function filesOf(vector: Vector, slug: string) {
  const flag = vector.flag;
  if (flag === null) return projectFiles(slug, []);
  const killed = vector.killedKeys ? vector.killedKeys.includes(vector.flagKey) : flag.killed;
  const kills: KillsFile = { kills: killed ? { [vector.flagKey]: { killedAt: '2026-01-01T00:00:00.000Z', killedBy: 'vectors' } } : {} };
  return projectFiles(
    slug,
    [
      {
        key: vector.flagKey,
        kind: kindOf(flag.valueOn, flag.valueOff),
        defaultValue: flag.defaultValue,
        archivedAt: flag.archived ? '2026-01-01T00:00:00.000Z' : null,
        enabled: flag.enabled,
        rolloutPct: flag.rolloutPct,
        valueOn: flag.valueOn,
        valueOff: flag.valueOff,
        rules: flag.rules,
      },
    ],
    { prod: kills },
  );
}

/**
 * Some vectors hold rule values of the wrong type for their operator, or flag keys outside the key pattern
 * (unicode bucketing), to pin the core's behaviour; the schema refuses those at write time (contract §4), so
 * they cannot reach the server.
 */
const servable = vectors
  .map((vector, i) => ({ vector, files: filesOf(vector, `v${i}`) }))
  .filter(({ files }) => files.every((f) => parseRepositoryFile(f.path, f.content).issues.length === 0));

describe('the shared evaluation vectors through POST /v1/evaluate (contract §4)', () => {
  let h: EvalHarness;
  const keys: string[] = [];

  beforeAll(async () => {
    h = await startHarness();
    await commitFiles(h.repo, servable.flatMap((s) => s.files), 'the evaluation vectors');
    await h.service.holder.served('acme');
    for (const { files } of servable) keys.push(await sdkKey(h, files[0].path.split('/')[1], 'prod'));
  }, 120_000);
  afterAll(() => h?.stop());

  it('runs at least 150 vectors, leaving out only those the schema refuses at write time', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(150);
    expect(servable.length).toBeGreaterThanOrEqual(vectors.length - 20);
  });

  it('answers every vector exactly as the vector expects', async () => {
    const mismatches: string[] = [];
    for (let i = 0; i < servable.length; i++) {
      const v = servable[i].vector;
      const res = await evaluate(h, keys[i], { key: v.flagKey, context: v.context });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, EvaluationResult>;
      try {
        expect(body[v.flagKey]).toStrictEqual(v.expected);
      } catch {
        mismatches.push(`${v.name}: got ${JSON.stringify(body[v.flagKey])}, want ${JSON.stringify(v.expected)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});
