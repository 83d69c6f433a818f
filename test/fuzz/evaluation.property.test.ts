/**
 * Invariants of evaluation (@flagops/core), for random snapshots and contexts: a kill wins over everything,
 * an archived flag serves its defaultValue, the same inputs give the same result, the bucket is in [0, 100)
 * with two decimals and is the reference MurmurHash3's, a rule with rolloutPct never applies without a
 * userId, and every result serves the value its variation names. And the results themselves, of the core with
 * the server's kill overlay and of the SDK's local mode (@flagops/sdk) fed the snapshot as JSON, for random
 * environments with variants, segments and prerequisites: exactly those of a second evaluator written from
 * docs/evaluation.md (reference-evaluation.ts), which shares no code with the core that both of them import.
 */
import { deepStrictEqual } from 'node:assert/strict';
import {
  bucket,
  compileEnvironment,
  type EvaluationContext,
  type EvaluationResult,
  type JsonValue,
  type Snapshot,
  type SnapshotFlag,
} from '@flagops/core';
import { createClient, silentSdkLogger } from '@flagops/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadVectors, referenceBucket, vectorFlags } from '../evaluation/support.js';
import { ManualScheduler } from '../sdk/manual-scheduler.js';
import { anyString, context, environmentSnapshot, flagKey, snapshotFlag, snapshotFlags } from './arbitraries.js';
import { runs } from './fuzz-settings.js';
import { referenceEvaluate } from './reference-evaluation.js';

/** A snapshot's flags and one of its keys. */
const flagsAndKey = snapshotFlags.chain((flags) => fc.record({ flags: fc.constant(flags), key: fc.constantFrom(...Object.keys(flags)) }));

/** A context without a userId, or with an empty one, which counts as none. */
const anonymousContext: fc.Arbitrary<EvaluationContext> = fc
  .tuple(context, fc.boolean())
  .map(([{ userId: _userId, ...rest }, empty]) => (empty ? { ...rest, userId: '' } : rest));

function evaluate(
  flags: Record<string, SnapshotFlag>,
  key: string,
  ctx: EvaluationContext,
  killedKeys?: ReadonlySet<string>,
): EvaluationResult {
  return compileEnvironment(flags).evaluate(key, ctx, killedKeys);
}

/** Two decimals exactly: the double nearest to n/100 for a whole n. */
function hasTwoDecimals(b: number): boolean {
  return Math.round(b * 100) / 100 === b;
}

describe('evaluation, for any snapshot and context', () => {
  it('serves valueOff with reason killed to a killed flag, whatever else it says', () => {
    fc.assert(
      fc.property(snapshotFlag, flagKey, context, (flag, key, ctx) => {
        const expected = { value: flag.valueOff, reason: 'killed', variation: 'off' };
        // Killed in the snapshot (as the SDK sees it), and by the server's kill overlay.
        deepStrictEqual(evaluate({ [key]: { ...flag, killed: true } }, key, ctx), expected);
        deepStrictEqual(evaluate({ [key]: { ...flag, killed: false } }, key, ctx, new Set([key])), expected);
      }),
      runs({ test: 300, fuzz: 50_000 }),
    );
  });

  it('serves the defaultValue of an archived flag that is not killed', () => {
    fc.assert(
      fc.property(snapshotFlag, flagKey, context, (flag, key, ctx) => {
        deepStrictEqual(evaluate({ [key]: { ...flag, archived: true, killed: false } }, key, ctx), {
          value: flag.defaultValue,
          reason: 'archived',
          variation: 'default',
        });
      }),
      runs({ test: 300, fuzz: 50_000 }),
    );
  });

  it('gives the same result for the same inputs, compiled once or anew', () => {
    fc.assert(
      fc.property(flagsAndKey, context, ({ flags, key }, ctx) => {
        const compiled = compileEnvironment(flags);
        const first = compiled.evaluate(key, ctx);
        deepStrictEqual(compiled.evaluate(key, ctx), first);
        deepStrictEqual(compileEnvironment(structuredClone(flags)).evaluate(key, structuredClone(ctx)), first);
      }),
      runs({ test: 300, fuzz: 50_000 }),
    );
  });

  it('serves the value its variation names, with a bucket only where one was computed', () => {
    fc.assert(
      fc.property(flagsAndKey, context, ({ flags, key }, ctx) => {
        const flag = flags[key];
        const result = evaluate(flags, key, ctx);
        const served: Record<string, JsonValue> = { on: flag.valueOn, off: flag.valueOff, default: flag.defaultValue };
        expect(Object.keys(served)).toContain(result.variation);
        deepStrictEqual(result.value, served[result.variation as string]);
        if (result.bucket !== undefined) {
          expect(['rollout', 'rule_match']).toContain(result.reason);
          expect(result.bucket).toBe(bucket(key, ctx.userId as string));
        }
        if (result.reason === 'rule_match') expect(flag.rules.map((r) => r.id)).toContain(result.ruleId);
        else expect(result.ruleId).toBeUndefined();
      }),
      runs({ test: 300, fuzz: 50_000 }),
    );
  });

  it('never applies a rule with rolloutPct to a context without a userId', () => {
    fc.assert(
      fc.property(flagsAndKey, anonymousContext, ({ flags, key }, ctx) => {
        const flag = flags[key];
        const result = evaluate(flags, key, ctx);
        expect(result.bucket).toBeUndefined();
        // The same as if those rules were not there at all.
        const withoutRolloutRules = { ...flag, rules: flag.rules.filter((r) => r.rolloutPct === undefined) };
        deepStrictEqual(result, evaluate({ [key]: withoutRolloutRules }, key, ctx));
      }),
      runs({ test: 300, fuzz: 50_000 }),
    );
  });
});

describe('the bucket, for any flag key and user id', () => {
  it('is in [0, 100) with two decimals, and is the reference MurmurHash3 bucket of "<flagKey>/<userId>"', () => {
    fc.assert(
      fc.property(fc.oneof(flagKey, anyString), anyString, (key, userId) => {
        const b = bucket(key, userId);
        expect(b).toBeGreaterThanOrEqual(0);
        expect(b).toBeLessThan(100);
        expect(hasTwoDecimals(b), `${b}`).toBe(true);
        expect(b).toBe(referenceBucket(key, userId));
      }),
      runs({ test: 1_000, fuzz: 200_000 }),
    );
  });
});

describe('the reference evaluator (reference-evaluation.ts)', () => {
  it('gives the expected result of every shared vector, so that the properties below check against the docs', () => {
    for (const v of loadVectors()) {
      const killedKeys = v.killedKeys === undefined ? undefined : new Set(v.killedKeys);
      const result = referenceEvaluate(vectorFlags(v), v.flagKey, v.context, { segments: v.segments, killedKeys });
      deepStrictEqual(JSON.parse(JSON.stringify(result)), v.expected, v.name);
    }
  });
});

/** Up to four contexts per environment; their user ids come from a pool that segments list too. */
const contexts = fc.array(context, { minLength: 1, maxLength: 4 });

describe('the core with the server’s kill overlay', () => {
  it('gives the reference’s result for every flag of any environment, any context and any kills', () => {
    fc.assert(
      fc.property(environmentSnapshot, contexts, fc.func(fc.boolean()), ({ flags, segments }, ctxs, isKilled) => {
        const keys = Object.keys(flags);
        const killedKeys = new Set(keys.filter((key) => isKilled(key)));
        const core = compileEnvironment(flags, segments);
        for (const key of [...keys, 'no-such-flag'])
          for (const ctx of ctxs)
            deepStrictEqual(
              core.evaluate(key, ctx, killedKeys),
              referenceEvaluate(flags, key, ctx, { segments, killedKeys }),
              `${key} for ${JSON.stringify(ctx)}`,
            );
      }),
      runs({ test: 1_000, fuzz: 40_000 }),
    );
  });
});

describe("the SDK's local evaluation", () => {
  /** A local-mode client serving a bootstrap snapshot sent through JSON, as the server sends it. */
  function localClient(snapshot: Snapshot) {
    // Every poll answers "not modified", and the clock moves only when told: the bootstrap is what serves.
    const notModified = async () => new Response(null, { status: 304, headers: { etag: '"v1"' } });
    return createClient({
      evalUrl: 'http://127.0.0.1:9',
      sdkKey: 'svc_sdk_fuzz',
      mode: 'local',
      stream: false,
      sendCounts: false,
      bootstrap: snapshot,
      fetch: notModified,
      scheduler: new ManualScheduler(0),
      logger: silentSdkLogger,
    });
  }

  it('gives the reference’s result for every flag of any environment and any context', async () => {
    await fc.assert(
      fc.asyncProperty(environmentSnapshot, contexts, async ({ flags, segments }, ctxs) => {
        const snapshot: Snapshot = JSON.parse(JSON.stringify({ version: 1, environment: 'dev', flags, segments }));
        const client = localClient(snapshot);
        try {
          for (const key of Object.keys(snapshot.flags)) {
            for (const ctx of ctxs)
              deepStrictEqual(
                client.details(key, null, ctx),
                referenceEvaluate(snapshot.flags, key, ctx, { segments: snapshot.segments }),
                `${key} for ${JSON.stringify(ctx)}`,
              );
          }
        } finally {
          await client.close();
        }
      }),
      runs({ test: 400, fuzz: 16_000 }),
    );
  });
});
