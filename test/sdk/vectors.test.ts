import type { EvaluationResult } from '@flagops/core';
import { createClient, type EvaluationDetails } from '@flagops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, type EvalHarness, sdkKey } from '../eval-server/harness.js';
import { vectors as cases, servableVectors } from '../vectors/servable-vectors.js';
import { quiet, startServiceHarness } from './sdk-harness.js';

/** What the SDK answers for a vector's expected result, asked with a null default (which accepts any value). */
function sdkExpectation(expected: EvaluationResult): Partial<EvaluationDetails> {
  if (expected.reason === 'flag_not_found')
    return { value: null, reason: 'error', errorCode: 'FLAG_NOT_FOUND', errorMessage: expect.any(String) };
  return expected as EvaluationDetails;
}

const servable = servableVectors('vec');

describe('the shared evaluation vectors through the SDK (test/vectors/README.md)', () => {
  let h: EvalHarness;
  const keys: string[] = [];

  beforeAll(async () => {
    h = await startServiceHarness();
    await commitFiles(
      h.repo,
      servable.flatMap((s) => s.files),
      'the evaluation vectors',
    );
    await h.service.holder.served('acme');
    for (const { slug } of servable) keys.push(await sdkKey(h, slug, 'prod'));
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
