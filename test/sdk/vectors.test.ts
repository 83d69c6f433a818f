import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvaluationContext, EvaluationResult, FlagKind, JsonValue, SnapshotFlag } from '../../src/model/index.js';
import { parseRepositoryFile } from '../../src/repository/parse-file.js';
import { createClient, type EvaluationDetails } from '../../src/sdk/index.js';
import { commitFiles, type EvalHarness, projectFiles, sdkKey } from '../eval-server/harness.js';
import { quiet, startServiceHarness } from './sdk-harness.js';

interface Vector {
  name: string;
  flagKey: string;
  flag: SnapshotFlag | null;
  context: EvaluationContext;
  killedKeys?: string[];
  expected: EvaluationResult;
}

const { cases } = JSON.parse(readFileSync(new URL('../vectors/evaluation.json', import.meta.url), 'utf8')) as { cases: Vector[] };

function kindFor(flag: SnapshotFlag): FlagKind {
  const same = (t: string) => typeof flag.valueOn === t && typeof flag.valueOff === t;
  return same('boolean') ? 'boolean' : same('string') ? 'string' : same('number') ? 'number' : 'json';
}

/** The repository files that make `vector` what project `slug` serves in prod: its one flag, killed or not. */
function vectorProject(vector: Vector, slug: string) {
  const { flag, flagKey } = vector;
  if (flag === null) return projectFiles(slug, []);
  const killed = vector.killedKeys?.includes(flagKey) ?? flag.killed;
  const spec = {
    key: flagKey,
    kind: kindFor(flag),
    defaultValue: flag.defaultValue as JsonValue,
    archivedAt: flag.archived ? '2026-02-01T00:00:00.000Z' : null,
    enabled: flag.enabled,
    rolloutPct: flag.rolloutPct,
    valueOn: flag.valueOn,
    valueOff: flag.valueOff,
    rules: flag.rules,
  };
  return projectFiles(slug, [spec], killed ? { prod: { kills: { [flagKey]: { killedAt: '2026-02-01T00:00:00.000Z', killedBy: 'vectors' } } } } : {});
}

/** What the SDK answers for a vector's expected result, asked with a null default (which accepts any value). */
function sdkExpectation(expected: EvaluationResult): Partial<EvaluationDetails> {
  if (expected.reason === 'flag_not_found') return { value: null, reason: 'error', errorCode: 'FLAG_NOT_FOUND', errorMessage: expect.any(String) };
  return expected as EvaluationDetails;
}

// Vectors the schema refuses at write time (wrong value types, keys outside the pattern) cannot be served.
const servable = cases
  .map((vector, i) => ({ vector, files: vectorProject(vector, `vec${i}`) }))
  .filter(({ files }) => files.every((f) => parseRepositoryFile(f.path, f.content).issues.length === 0));

describe('the shared evaluation vectors through the SDK (test/vectors/README.md)', () => {
  let h: EvalHarness;
  const keys: string[] = [];

  beforeAll(async () => {
    h = await startServiceHarness();
    await commitFiles(h.repo, servable.flatMap((s) => s.files), 'the evaluation vectors');
    await h.service.holder.served('acme');
    for (const { files } of servable) keys.push(await sdkKey(h, files[0].path.split('/')[1], 'prod'));
  }, 120_000);
  afterAll(() => h?.stop());

  it('serves all but the few vectors the schema refuses', () => {
    expect(servable.length).toBeGreaterThanOrEqual(cases.length - 20);
  });

  for (const mode of ['local', 'remote'] as const) {
    it(`gives each servable vector its expected result in ${mode} mode`, async () => {
      const mismatches: string[] = [];
      for (let i = 0; i < servable.length; i++) {
        const { vector } = servable[i];
        const client = createClient({ evalUrl: h.service.evalUrl, sdkKey: keys[i], mode, stream: false, sendCounts: false, logger: quiet });
        expect(await client.ready()).toBe('ready');
        const got = await client.details(vector.flagKey, null, vector.context);
        await client.close();
        try {
          expect(got).toStrictEqual(sdkExpectation(vector.expected));
        } catch {
          mismatches.push(`${vector.name}: got ${JSON.stringify(got)}, want ${JSON.stringify(vector.expected)}`);
        }
      }
      expect(mismatches).toEqual([]);
    }, 60_000);
  }
});
