import { beforeAll, describe, expect, it } from 'vitest';
import { useMcpSuite } from './harness/mcp-suite.js';
import { textOf } from './harness/spawn-mcp.js';

const suite = useMcpSuite();
let prodSdk: string;

interface Explained {
  result: { value: unknown; reason: string; variation: string; ruleId?: string; bucket?: number };
  decidedBy: { step: string; ruleId?: string; outcome: string };
  steps: Array<{ step: string; ruleId?: string; conditions?: Array<{ attribute: string; actual?: unknown; holds: boolean }> }>;
}
const explain = async (key: string, context?: unknown) => {
  const result = await suite.mcp.call('explain_evaluation', { key, env: 'prod', ...(context === undefined ? {} : { context }) });
  expect(result.isError, textOf(result)).toBeFalsy();
  return { text: textOf(result), data: result.structuredContent as unknown as Explained };
};

beforeAll(async () => {
  const eu = { id: 'eu-new', serve: 'on', conditions: [{ attribute: 'country', op: 'in', value: ['DE', 'FR'] }] };
  await suite.service.flag('checkout', { prod: { enabled: true, rolloutPct: 0, rules: [eu] } });
  await suite.service.flag('half', { prod: { enabled: true, rolloutPct: 50 } });
  const retired = await suite.service.flag('retired', { prod: { enabled: true, rolloutPct: 100 } });
  await suite.service.admin.delete(`/api/v1/flags/${retired.id}`);
  prodSdk = await suite.service.sdkKey('prod');
});

describe('explain_evaluation', () => {
  it('names the matching rule and its id, and agrees with the evaluation API', async () => {
    const context = { userId: 'u-1', attributes: { country: 'FR' } };
    const { text, data } = await explain('checkout', context);
    expect(data.result).toMatchObject({ value: true, reason: 'rule_match', ruleId: 'eu-new' });
    expect(data.decidedBy).toMatchObject({ step: 'rule', ruleId: 'eu-new' });
    expect(text).toContain('checkout in prod: value true (variation on, reason rule_match, ruleId eu-new)');
    expect(text).toContain('Decided by step "rule" (rule eu-new): matches: serves valueOn');
    expect(await suite.service.evaluate(prodSdk, 'checkout', context)).toEqual(data.result);
  });

  it('shows each condition that failed, with the value it saw, before the step that decided', async () => {
    const { text, data } = await explain('checkout', { attributes: { country: 'US' } });
    expect(data.result).toMatchObject({ value: false, reason: 'default' });
    expect(data.decidedBy.step).toBe('rollout');
    expect(data.steps.find((s) => s.step === 'rule')?.conditions).toEqual([
      expect.objectContaining({ attribute: 'country', actual: 'US', holds: false }),
    ]);
    expect(text).toContain('country in ["DE","FR"] — actual "US": does not hold');
  });

  it('reports the bucket of a rollout, the same as the evaluation API', async () => {
    const context = { userId: 'user-42' };
    const { data } = await explain('half', context);
    expect(data.result.reason).toBe('rollout');
    expect(data.result.bucket).toEqual(expect.any(Number));
    expect(await suite.service.evaluate(prodSdk, 'half', context)).toEqual(data.result);
  });

  it('says killed when the flag is killed, whatever the rules say', async () => {
    await suite.mcp.call('kill_flag', { key: 'checkout', env: 'prod', reason: 'test' });
    const { text, data } = await explain('checkout', { attributes: { country: 'FR' } });
    expect(data.result).toMatchObject({ value: false, reason: 'killed', variation: 'off' });
    expect(data.steps).toHaveLength(1);
    expect(text).toContain('Decided by step "killed"');
  });

  it('says archived for an archived flag, serving its defaultValue', async () => {
    const { data } = await explain('retired');
    expect(data.result).toMatchObject({ value: false, reason: 'archived', variation: 'default' });
    expect(await suite.service.evaluate(prodSdk, 'retired')).toEqual(data.result);
  });

  it('changes nothing: the audit trail has no entry from it', async () => {
    const before = await suite.mcp.call('get_audit_log', { limit: 1 });
    await explain('half', { userId: 'someone' });
    const after = await suite.mcp.call('get_audit_log', { limit: 1 });
    expect(after.structuredContent).toEqual(before.structuredContent);
  });
});
