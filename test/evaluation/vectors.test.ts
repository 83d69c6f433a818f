import { compileEnvironment, explainEvaluation, OPERATORS } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { loadVectors, referenceBucket, type Vector } from './support.js';

const vectors = loadVectors();

function run(v: Vector) {
  const env = compileEnvironment(v.flag === null ? {} : { [v.flagKey]: v.flag });
  return env.evaluate(v.flagKey, v.context, v.killedKeys === undefined ? undefined : new Set(v.killedKeys));
}

describe('the shared evaluation vectors (test/vectors/evaluation.json)', () => {
  it('hold at least 150 uniquely named cases', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(150);
    expect(new Set(vectors.map((v) => v.name)).size).toBe(vectors.length);
  });

  it('cover every reason and every operator', () => {
    const reasons = new Set(vectors.map((v) => v.expected.reason));
    for (const reason of ['killed', 'archived', 'flag_disabled', 'rule_match', 'rollout', 'default', 'flag_not_found'])
      expect(reasons).toContain(reason);
    const ops = new Set(vectors.flatMap((v) => v.flag?.rules.flatMap((r) => r.conditions.map((c) => c.op)) ?? []));
    for (const op of OPERATORS) expect(ops).toContain(op);
  });

  it('carry buckets computed by the reference hash (murmurhash-js), not by the code under test', () => {
    const withBucket = vectors.filter((v) => v.expected.bucket !== undefined);
    expect(withBucket.length).toBeGreaterThan(30);
    for (const v of withBucket) expect(v.expected.bucket, v.name).toBe(referenceBucket(v.flagKey, v.context.userId as string));
  });

  it.each(vectors.map((v) => [v.name, v] as const))('%s', (_, v) => {
    expect(JSON.parse(JSON.stringify(run(v)))).toStrictEqual(v.expected);
  });
});

describe('explainEvaluation', () => {
  it('agrees with evaluate on every vector', () => {
    for (const v of vectors) {
      if (v.flag === null) continue;
      const killed = v.killedKeys === undefined ? undefined : v.killedKeys.includes(v.flagKey);
      expect(explainEvaluation(v.flag, v.flagKey, v.context, killed).result, v.name).toStrictEqual(run(v));
    }
  });
});
