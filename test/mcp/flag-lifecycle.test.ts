import { describe, expect, it } from 'vitest';
import { useMcpSuite } from './harness/mcp-suite.js';
import { textOf } from './harness/spawn-mcp.js';

const suite = useMcpSuite();

const read = async (key: string) => (await suite.service.admin.get(`/api/v1/flags/lookup?projectSlug=shop&key=${key}`)).body;

describe('flag lifecycle through MCP', () => {
  it('create_flag takes a lifecycle, and the answer says type, owner and expiry', async () => {
    const result = await suite.mcp.call('create_flag', {
      key: 'new-checkout',
      lifecycle: { type: 'experiment', owner: 'team-checkout', expiresAt: '2027-03-31' },
    });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('lifecycle: experiment flag, owner team-checkout, expires 2027-03-31');
    expect((await read('new-checkout')).lifecycle).toEqual({ type: 'experiment', owner: 'team-checkout', expiresAt: '2027-03-31' });
  });

  it('get_flag shows the lifecycle, or that none is set', async () => {
    expect(textOf(await suite.mcp.call('get_flag', { key: 'new-checkout' }))).toContain(
      'lifecycle: experiment flag, owner team-checkout, expires 2027-03-31',
    );
    await suite.mcp.call('create_flag', { key: 'plain' });
    expect(textOf(await suite.mcp.call('get_flag', { key: 'plain' }))).toContain('lifecycle: none set');
  });

  it('update_flag changes the lifecycle field by field, null removing a field or the whole lifecycle', async () => {
    const typed = await suite.mcp.call('update_flag', { key: 'new-checkout', lifecycle: { type: 'release', expiresAt: null } });
    expect(typed.isError).toBeFalsy();
    expect(textOf(typed)).toContain('Updated new-checkout in shop.');
    expect(textOf(typed)).toContain('lifecycle: release flag, owner team-checkout, no expiry');
    expect((await read('new-checkout')).lifecycle).toEqual({ type: 'release', owner: 'team-checkout' });
    const renamed = await suite.mcp.call('update_flag', { key: 'new-checkout', name: 'New checkout' });
    expect(renamed.isError).toBeFalsy();
    expect(await read('new-checkout')).toMatchObject({ name: 'New checkout', lifecycle: { type: 'release', owner: 'team-checkout' } });
    const removed = await suite.mcp.call('update_flag', { key: 'new-checkout', lifecycle: null });
    expect(removed.isError).toBeFalsy();
    expect(await read('new-checkout')).not.toHaveProperty('lifecycle');
  });

  it('refuses bad lifecycle data with the field named, and a call that changes nothing', async () => {
    const badType = await suite.mcp.call('update_flag', { key: 'plain', lifecycle: { type: 'temporary' } });
    expect(badType.isError).toBe(true);
    expect(textOf(badType)).toMatch(/lifecycle/);
    const badDate = await suite.mcp.call('update_flag', { key: 'plain', lifecycle: { expiresAt: 'next spring' } });
    expect(badDate.isError).toBe(true);
    expect(badDate.structuredContent).toMatchObject({ error: { code: 'invalid_input', status: 400 } });
    expect(textOf(badDate)).toContain('lifecycle.expiresAt: must be an ISO 8601 date');
    const nothing = await suite.mcp.call('update_flag', { key: 'plain' });
    expect(nothing.isError).toBe(true);
    expect(textOf(nothing)).toMatch(/^invalid_input: nothing to change/);
    expect(await read('plain')).not.toHaveProperty('lifecycle');
  });
});
