import { beforeAll, describe, expect, it } from 'vitest';
import { useMcpSuite } from './harness/mcp-suite.js';
import { textOf } from './harness/spawn-mcp.js';

const suite = useMcpSuite();
let devSdk: string;

beforeAll(async () => {
  const flag = await suite.service.flag('old-banner', { staging: { enabled: true, rolloutPct: 100 } });
  expect((await suite.service.admin.delete(`/api/v1/flags/${flag.id}`)).status).toBe(200);
  devSdk = await suite.service.sdkKey('dev');
});

const STORED_NOT_SERVED =
  /Note: old-banner is ARCHIVED \(since .*\): this config is stored but not served\. dev serves its defaultValue false \(reason "archived"\) until the flag is restored/;

// Evaluation serves an archived flag's defaultValue whatever its configs say: a write to them must not read as served.
describe('config tools on an archived flag', () => {
  it.each([
    ['set_rollout', { rolloutPct: 50 }],
    ['update_flag_config', { enabled: true, rolloutPct: 100 }],
    ['set_variants', { variants: [{ name: 'a', value: true, weight: 100 }] }],
    ['set_prerequisites', { prerequisites: [] }],
    ['schedule_rollout', { startPct: 5, stepPct: 50, every: '1h' }],
    ['promote_flag', { fromEnv: 'staging', toEnv: 'dev' }],
  ])('%s says the change is stored but not served, and claims nothing else is served', async (tool, args) => {
    const result = await suite.mcp.call(tool, { key: 'old-banner', ...('toEnv' in args ? {} : { env: 'dev' }), ...args });
    expect(result.isError, textOf(result)).toBeFalsy();
    const text = textOf(result);
    expect(text).toMatch(STORED_NOT_SERVED);
    expect(text).not.toMatch(/serves valueOff until enabled/);
    expect(await suite.service.evaluate(devSdk, 'old-banner')).toMatchObject({ value: false, reason: 'archived' });
  });

  it('a killed archived flag: the kill is served first, then the defaultValue', async () => {
    await suite.mcp.call('kill_flag', { key: 'old-banner', env: 'dev', reason: 'test' });
    const result = await suite.mcp.call('set_rollout', { key: 'old-banner', env: 'dev', rolloutPct: 10 });
    expect(textOf(result)).toMatch(/dev serves valueOff while the kill lasts \(a kill comes first\), then its defaultValue false/);
    expect(textOf(result)).not.toContain('until clear_kill');
  });
});
