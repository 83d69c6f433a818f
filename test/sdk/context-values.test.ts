import type { EvaluationContext } from '@flagops/core';
import { createClient, type LocalClient, type RemoteClient } from '@flagops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quiet, type SdkHarness, startSdkHarness } from './sdk-harness.js';

/** On for x = null, for tags containing null, for x > 5; everyone else is off (no rollout). */
const flags = [
  {
    key: 'e12',
    rolloutPct: 0,
    rules: [
      { id: 'x-null', serve: 'on' as const, conditions: [{ attribute: 'x', op: 'eq' as const, value: null }] },
      { id: 'tags-null', serve: 'on' as const, conditions: [{ attribute: 'tags', op: 'contains' as const, value: null }] },
      { id: 'x-big', serve: 'on' as const, conditions: [{ attribute: 'x', op: 'gt' as const, value: 5 }] },
    ],
  },
];

const circular: Record<string, unknown> = { a: 1 };
circular.self = circular;

/** Attributes JSON cannot carry as they are: each matches no operator, in local mode as on the server. */
const notJson: Record<string, Record<string, unknown>> = {
  NaN: { x: Number.NaN },
  Infinity: { x: Number.POSITIVE_INFINITY },
  '-Infinity': { x: Number.NEGATIVE_INFINITY },
  bigint: { x: 1n },
  'a circular object': { x: circular },
  'a function': { x: () => 1 },
  'a Date': { x: new Date(0) },
  'NaN in an array': { tags: [Number.NaN, 'a'] },
  'undefined in an array': { tags: [undefined, 'a'] },
};

describe('a context with values that are not JSON (docs/sdk.md, "Reading flags")', () => {
  let h: SdkHarness;
  let local: LocalClient;
  let remote: RemoteClient;

  beforeAll(async () => {
    h = await startSdkHarness(flags);
    local = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, logger: quiet });
    remote = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, mode: 'remote', logger: quiet });
    await Promise.all([local.ready(), remote.ready()]);
  });
  afterAll(async () => {
    await Promise.all([local?.close(), remote?.close()]);
    await h?.stop();
  });

  /** POST /v1/evaluate with the body text as given. */
  async function serverResult(body: string) {
    const res = await fetch(`${h.service.evalUrl}/v1/evaluate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as Record<string, unknown>).e12;
  }

  it('the server matches no operator with a number beyond range, which it reads as Infinity', async () => {
    expect(await serverResult('{"key":"e12","context":{"attributes":{"x":1e999}}}')).toMatchObject({ value: false, reason: 'default' });
    expect(await serverResult('{"key":"e12","context":{"attributes":{"tags":[1e999,"a"]}}}')).toMatchObject({
      value: false,
      reason: 'default',
    });
    // null itself is JSON: the rule on it matches.
    expect(await serverResult('{"key":"e12","context":{"attributes":{"x":null}}}')).toMatchObject({ value: true, reason: 'rule_match' });
  });

  for (const [name, attributes] of Object.entries(notJson)) {
    it(`${name}: remote mode resolves with what local mode and the server answer, the default of the flag`, async () => {
      const context = { userId: 'u', attributes } as unknown as EvaluationContext;
      const localDetails = local.details('e12', false, context);
      expect(localDetails).toMatchObject({ value: false, reason: 'default' });
      await expect(remote.details('e12', false, context)).resolves.toEqual(localDetails);
      await expect(remote.boolean('e12', true, context)).resolves.toBe(false);
    });
  }

  it('the cache keeps a NaN apart from null', async () => {
    expect(await remote.details('e12', false, { userId: 'v', attributes: { x: null } })).toMatchObject({
      value: true,
      reason: 'rule_match',
    });
    expect(await remote.details('e12', false, { userId: 'v', attributes: { x: Number.NaN } })).toMatchObject({
      value: false,
      reason: 'default',
    });
  });
  it('a context the server refuses (nested past 100 levels, over 1 MiB) is INVALID_CONTEXT in remote mode; local mode evaluates it', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = { a: deep };
    const contexts = { deep: { userId: 'u', attributes: { deep } }, large: { userId: 'u', attributes: { big: 'x'.repeat(1_100_000) } } };
    for (const context of Object.values(contexts) as EvaluationContext[]) {
      const remoteDetails = await remote.details('e12', true, context);
      expect(remoteDetails).toMatchObject({ value: true, reason: 'error', errorCode: 'INVALID_CONTEXT' });
      expect(remoteDetails.errorMessage).toMatch(/POST \/v1\/evaluate answered (400|413)/);
      // Local mode reads only the attributes its rules name: it has nothing to refuse.
      expect(local.details('e12', true, context)).toMatchObject({ value: false, reason: 'default' });
    }
  });
});
