import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { pushEdit } from '../helpers/git-cli.js';
import { useMcpSuite } from './harness/mcp-suite.js';
import { textOf } from './harness/spawn-mcp.js';

const suite = useMcpSuite();
const broken = 'projects/shop/environments/prod/pricing.yaml';

beforeAll(async () => {
  await suite.service.flag('banner');
  await suite.service.flag('pricing', { prod: { enabled: true, rolloutPct: 40 } });
  pushEdit(suite.service.svc.gitdir(), (checkout) =>
    writeFileSync(path.join(checkout, broken), 'enabled: true\nrolloutPct: 250\nvalueOn: true\nvalueOff: false\n'),
  );
  const started = Date.now();
  while (Date.now() - started < 10_000) {
    const flag = (await suite.service.admin.get('/api/v1/flags/lookup?projectSlug=shop&key=pricing')).body;
    if (flag.invalidFiles) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the pushed file was not reported');
});

describe('a flag held back by an invalid file on main', () => {
  it('get_flag says it is held back, names the file and line, and shows the last valid state it serves', async () => {
    const text = textOf(await suite.mcp.call('get_flag', { key: 'pricing' }));
    expect(text).toContain('HELD BACK');
    expect(text).toContain(`${broken}:2`);
    expect(text).toMatch(/prod: enabled, rollout 40%/);
  });

  it('list_flags marks it and only it', async () => {
    const lines = textOf(await suite.mcp.call('list_flags', {})).split('\n');
    expect(lines.find((line) => line.startsWith('pricing:'))).toContain(`HELD BACK by invalid ${broken}:2`);
    expect(lines.find((line) => line.startsWith('banner:'))).not.toContain('HELD BACK');
  });

  it('a write to it is isError invalid_in_repository, telling the agent not to retry', async () => {
    const result = await suite.mcp.call('set_rollout', { key: 'pricing', env: 'dev', rolloutPct: 10 });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: 'invalid_in_repository', status: 409 } });
    expect(textOf(result)).toContain(broken);
    expect(textOf(result)).toMatch(/Do not retry/);
  });

  it('a kill of it still works', async () => {
    const result = await suite.mcp.call('kill_flag', { key: 'pricing', env: 'prod' });
    expect(result.isError).toBeFalsy();
    const sdk = await suite.service.sdkKey('prod');
    expect(await suite.service.evaluate(sdk, 'pricing')).toMatchObject({ reason: 'killed' });
  });
});
