import { beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../helpers/http-client.js';
import { useMcpSuite } from './harness/mcp-suite.js';
import { textOf } from './harness/spawn-mcp.js';

const suite = useMcpSuite();
let prodSdk: string;

const read = async (key: string) => (await suite.service.admin.get(`/api/v1/flags/lookup?projectSlug=shop&key=${key}`)).body;
const nextOf = (result: Awaited<ReturnType<typeof suite.mcp.call>>) =>
  (result.structuredContent as { error: { next?: string } }).error.next;
const call = async (tool: string, args: Record<string, unknown>) => {
  const result = await suite.mcp.call(tool, args);
  expect(result.isError, textOf(result)).toBeFalsy();
  return { text: textOf(result), data: result.structuredContent as Json };
};

beforeAll(async () => {
  await suite.service.flag('experiment', { prod: { enabled: true, rolloutPct: 100 } });
  await suite.service.flag('payments', { prod: { enabled: true, rolloutPct: 100 } });
  prodSdk = await suite.service.sdkKey('prod');
});

describe('set_variants', () => {
  it('sets variants and weights, says the split, and the evaluation API serves them', async () => {
    const { text } = await call('set_variants', {
      key: 'experiment',
      env: 'prod',
      variants: [
        { name: 'control', value: false, weight: 50 },
        { name: 'treatment', value: true, weight: 50 },
      ],
    });
    expect(text).toContain('Set the variants of experiment in prod: control 50%, treatment 50%.');
    expect((await read('experiment')).environments.prod.variants).toHaveLength(2);
    const result = await suite.service.evaluate(prodSdk, 'experiment', { userId: 'u-1' });
    expect(['control', 'treatment']).toContain(result.variation);
  });

  it('weights that do not add up to 100 are isError naming the field, and nothing changes', async () => {
    const result = await suite.mcp.call('set_variants', {
      key: 'experiment',
      env: 'prod',
      variants: [
        { name: 'a', value: true, weight: 60 },
        { name: 'b', value: false, weight: 60 },
      ],
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('weights must add up to exactly 100');
    expect((await read('experiment')).environments.prod.variants.map((v: { name: string }) => v.name)).toEqual(['control', 'treatment']);
  });
});

describe('segments', () => {
  it('upsert_segment creates and replaces, list_segments and get_segment read, delete_segment deletes', async () => {
    const created = await call('upsert_segment', { segment: 'beta-testers', name: 'Beta testers', userIds: ['ana', 'bo'] });
    expect(created.text).toContain('Created segment beta-testers: 2 user ids, 0 conditions.');
    const replaced = await call('upsert_segment', {
      segment: 'beta-testers',
      name: 'Beta testers',
      userIds: ['ana', 'bo', 'chen'],
      expectedVersion: 1,
    });
    expect(replaced.text).toContain('Replaced segment beta-testers: 3 user ids, 0 conditions.');
    expect((await call('list_segments', {})).text).toContain('beta-testers (Beta testers): 3 user ids, 0 conditions, unused');
    expect((await call('get_segment', { segment: 'beta-testers' })).data.segment.userIds).toEqual(['ana', 'bo', 'chen']);
    await call('upsert_segment', { segment: 'scratch' });
    expect((await call('delete_segment', { segment: 'scratch' })).text).toContain('Deleted segment scratch.');
  });

  it('delete_segment of a segment in use is isError conflict naming the flags', async () => {
    await call('upsert_segment', { segment: 'used', userIds: ['x'] });
    await call('update_flag_config', {
      key: 'payments',
      env: 'prod',
      rules: [{ id: 'u', serve: 'on', conditions: [{ op: 'in_segment', value: 'used' }] }],
    });
    const result = await suite.mcp.call('delete_segment', { segment: 'used' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^conflict: .*payments/);
    expect(nextOf(result)).toMatch(/still in use: remove it from the rules of the flags named/);
    await call('update_flag_config', { key: 'payments', env: 'prod', rules: [] });
  });

  it('point a segment error to the segment tools, not to the flag tools', async () => {
    for (const tool of ['get_segment', 'delete_segment']) {
      const missing = await suite.mcp.call(tool, { segment: 'no-such-segment' });
      expect(missing.structuredContent, tool).toMatchObject({ error: { code: 'not_found' } });
      expect(nextOf(missing), tool).toBe('Check the segment key with list_segments.');
    }
    await call('upsert_segment', { segment: 'versioned', userIds: ['a'] });
    const stale = await suite.mcp.call('upsert_segment', { segment: 'versioned', userIds: ['b'], expectedVersion: 99 });
    expect(stale.structuredContent).toMatchObject({ error: { code: 'version_conflict' } });
    expect(nextOf(stale)).toMatch(/^The segment changed since you read it\. Call get_segment/);
  });
});

describe('set_prerequisites and explain_evaluation', () => {
  it('sets prerequisites, and explains a failed prerequisite, segment membership and the variant bucket', async () => {
    await call('upsert_segment', { segment: 'vip', userIds: ['ana'] });
    await call('update_flag_config', {
      key: 'experiment',
      env: 'prod',
      rules: [{ id: 'vip', serve: 'treatment', conditions: [{ op: 'in_segment', value: 'vip' }] }],
    });
    const set = await call('set_prerequisites', { key: 'experiment', env: 'prod', prerequisites: [{ flag: 'payments', variation: 'on' }] });
    expect(set.text).toContain('Set the prerequisites of experiment in prod: payments must serve on.');

    const member = await call('explain_evaluation', { key: 'experiment', env: 'prod', context: { userId: 'ana' } });
    expect(member.data.result).toEqual({ value: true, reason: 'rule_match', variation: 'treatment', ruleId: 'vip' });
    expect(member.text).toContain('in_segment vip — member (listed): holds');
    expect(member.text).toContain('prerequisites: every prerequisite serves its variation');

    const other = await call('explain_evaluation', { key: 'experiment', env: 'prod', context: { userId: 'zed' } });
    expect(other.data.result.variantBucket).toEqual(expect.any(Number));
    expect(other.text).toMatch(/variant bucket [\d.]+ is in \[\d+, \d+\): variant (control|treatment)/);
    expect(await suite.service.evaluate(prodSdk, 'experiment', { userId: 'zed' })).toEqual(other.data.result);

    await suite.mcp.call('kill_flag', { key: 'payments', env: 'prod', reason: 'test' });
    const failed = await call('explain_evaluation', { key: 'experiment', env: 'prod', context: { userId: 'ana' } });
    expect(failed.data.result).toEqual({ value: false, reason: 'prerequisite_failed', variation: 'off', prerequisiteKey: 'payments' });
    expect(failed.text).toContain('prerequisite payments serves off (reason killed), not on');
  });
});
