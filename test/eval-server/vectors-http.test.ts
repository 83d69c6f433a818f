import type { EvaluationResult } from '@flagops/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servableVectors, vectors } from '../vectors/servable-vectors.js';
import { commitFiles, type EvalHarness, evaluate, sdkKey, startHarness } from './harness.js';

const servable = servableVectors('v');

describe('the shared evaluation vectors through POST /v1/evaluate', () => {
  let h: EvalHarness;
  const keys: string[] = [];

  beforeAll(async () => {
    h = await startHarness();
    await commitFiles(
      h.repo,
      servable.flatMap((s) => s.files),
      'the evaluation vectors',
    );
    await h.service.holder.served('acme');
    for (const { slug } of servable) keys.push(await sdkKey(h, slug, 'prod'));
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
