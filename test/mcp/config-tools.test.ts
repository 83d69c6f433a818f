import { beforeAll, describe, expect, it } from 'vitest';
import { useMcpSuite } from './harness/mcp-suite.js';
import { textOf } from './harness/spawn-mcp.js';

const suite = useMcpSuite();

interface FlagBody {
  environments: Record<
    string,
    { enabled: boolean; rolloutPct: number; version: number; rules: Array<{ id: string }>; valueOn: unknown; killed: boolean }
  >;
}
const read = async (key: string): Promise<FlagBody> =>
  (await suite.service.admin.get(`/api/v1/flags/lookup?projectSlug=shop&key=${key}`)).body;

beforeAll(async () => {
  await suite.service.flag('banner');
  await suite.service.flag('pricing', {
    dev: {
      enabled: true,
      rolloutPct: 40,
      rules: [{ id: 'beta', serve: 'on', conditions: [{ attribute: 'plan', op: 'eq', value: 'beta' }] }],
    },
  });
});

describe('set_rollout', () => {
  it('sets the percentage and says the flag is still disabled', async () => {
    const result = await suite.mcp.call('set_rollout', { key: 'banner', env: 'dev', rolloutPct: 25 });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('Set the rollout of banner in dev to 25%.');
    expect(textOf(result)).toContain('Note: the flag is disabled in dev');
    expect((await read('banner')).environments.dev).toMatchObject({ rolloutPct: 25, version: 2 });
  });

  it('with the current expectedVersion succeeds', async () => {
    const result = await suite.mcp.call('set_rollout', { key: 'banner', env: 'dev', rolloutPct: 30, expectedVersion: 2 });
    expect(result.isError).toBeFalsy();
    expect((await read('banner')).environments.dev).toMatchObject({ rolloutPct: 30, version: 3 });
  });

  it('with a stale expectedVersion is isError version_conflict, telling the agent to re-read, and changes nothing', async () => {
    const result = await suite.mcp.call('set_rollout', { key: 'banner', env: 'dev', rolloutPct: 90, expectedVersion: 2 });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: 'version_conflict', status: 409 } });
    expect(textOf(result)).toMatch(/^version_conflict: /);
    expect(textOf(result)).toMatch(/get_flag to read the current version.*retry with expectedVersion/);
    expect((await read('banner')).environments.dev).toMatchObject({ rolloutPct: 30, version: 3 });
  });
});

describe('a call with bad input', () => {
  it('is isError naming each bad field, and nothing is sent', async () => {
    const result = await suite.mcp.call('set_rollout', { key: 'banner', env: 'qa', rolloutPct: 150 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Input validation error/);
    expect(textOf(result)).toMatch(/env/);
    expect(textOf(result)).toMatch(/rolloutPct/);
    expect((await read('banner')).environments.dev.rolloutPct).toBe(30);
  });

  it('with an argument the tool does not take (a misspelt expectedVersion, a nested field) is refused by name, and nothing is changed', async () => {
    const misspelt = await suite.mcp.call('set_rollout', { key: 'banner', env: 'dev', rolloutPct: 60, expectedVerison: 1 });
    expect(misspelt.isError).toBe(true);
    expect(textOf(misspelt)).toMatch(/Input validation error/);
    expect(textOf(misspelt)).toMatch(/expectedVerison/);
    const nested = await suite.mcp.call('update_flag_config', {
      key: 'banner',
      env: 'dev',
      rules: [{ id: 'r', serve: 'on', conditions: [{ attribute: 'plan', op: 'eq', value: 'x', negate: true }] }],
    });
    expect(nested.isError).toBe(true);
    expect(textOf(nested)).toMatch(/negate/);
    expect((await read('banner')).environments.dev).toMatchObject({ rolloutPct: 30, version: 3, rules: [] });
  });

  it('that only the API can judge comes back with its invalid_input message', async () => {
    const result = await suite.mcp.call('update_flag_config', { key: 'banner', env: 'dev', valueOn: 'yes' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: 'invalid_input', status: 400 } });
    expect(textOf(result)).toMatch(/valueOn/);
  });

  it('leaves the server serving the next call', async () => {
    const result = await suite.mcp.call('get_flag', { key: 'banner' });
    expect(result.isError).toBeFalsy();
  });
});

describe('update_flag_config', () => {
  it('changes only the fields given, and the rules get ids from the server', async () => {
    const rules = [{ serve: 'on', conditions: [{ attribute: 'country', op: 'in', value: ['DE', 'FR'] }] }];
    const result = await suite.mcp.call('update_flag_config', { key: 'banner', env: 'dev', enabled: true, rules, expectedVersion: 3 });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('Updated enabled, rules of banner in dev.');
    const dev = (await read('banner')).environments.dev;
    expect(dev).toMatchObject({ enabled: true, rolloutPct: 30, version: 4 });
    expect(dev.rules[0].id).toEqual(expect.any(String));
  });

  it('refuses a call that changes nothing', async () => {
    const result = await suite.mcp.call('update_flag_config', { key: 'banner', env: 'dev', expectedVersion: 4 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^invalid_input: nothing to change/);
  });
});

describe('promote_flag', () => {
  it('copies dev to staging', async () => {
    const result = await suite.mcp.call('promote_flag', { key: 'pricing', fromEnv: 'dev', toEnv: 'staging' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('Promoted pricing from dev to staging.');
    expect((await read('pricing')).environments.staging).toMatchObject({
      enabled: true,
      rolloutPct: 40,
      rules: [{ id: 'beta' }],
      version: 2,
    });
  });

  it('into prod is refused for an agent key: isError forbidden, a human must do it, prod unchanged', async () => {
    const result = await suite.mcp.call('promote_flag', { key: 'pricing', fromEnv: 'staging', toEnv: 'prod' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: 'forbidden', status: 403 } });
    expect(textOf(result)).toMatch(/^forbidden: /);
    expect(textOf(result)).toMatch(/needs a human.*admin key/);
    expect((await read('pricing')).environments.prod).toMatchObject({ enabled: false, version: 1 });
  });

  it('is audited as promote from dev to staging', async () => {
    const result = await suite.mcp.call('get_audit_log', { key: 'pricing', action: 'promote' });
    expect(result.structuredContent).toMatchObject({
      entries: [{ action: 'promote', fromEnvironment: 'dev', environment: 'staging', actor: { type: 'agent' } }],
    });
    expect(textOf(result)).toContain('promote pricing dev → staging by agent');
  });
});

describe('create_flag', () => {
  it('creates a flag, off in every environment', async () => {
    const result = await suite.mcp.call('create_flag', { key: 'dark-mode', name: 'Dark mode', kind: 'string', defaultValue: 'light' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('Created dark-mode in shop.');
    expect(result.structuredContent).toMatchObject({ flag: { key: 'dark-mode', kind: 'string', defaultValue: 'light' } });
    const flag = await read('dark-mode');
    for (const env of ['dev', 'staging', 'prod']) expect(flag.environments[env]).toMatchObject({ enabled: false, rolloutPct: 0 });
  });

  it('of an existing key is isError conflict', async () => {
    const result = await suite.mcp.call('create_flag', { key: 'dark-mode' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: 'conflict', status: 409 } });
  });
});
