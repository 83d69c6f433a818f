import { describe, expect, it } from 'vitest';
import type { Json } from '../helpers/http-client.js';
import { useMcpSuite } from './harness/mcp-suite.js';
import { textOf } from './harness/spawn-mcp.js';

const suite = useMcpSuite();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const read = async (key: string): Promise<Json> => (await suite.service.admin.get(`/api/v1/flags/lookup?projectSlug=shop&key=${key}`)).body;

describe('schedule_rollout', () => {
  it('writes "5 % now, then +20 % every hour to 100 %" as a schedule, which get_flag shows', async () => {
    await suite.service.flag('new-search');
    const result = await suite.mcp.call('schedule_rollout', { key: 'new-search', env: 'prod', startPct: 5, stepPct: 20, every: '1h' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('Scheduled a progressive rollout of new-search in prod: 5 steps to come.');
    const prod = (await read('new-search')).environments.prod;
    expect(prod).toMatchObject({ enabled: true, rolloutPct: 5 });
    expect(prod.schedule.map((step: Json) => step.set.rolloutPct)).toEqual([25, 45, 65, 85, 100]);
    const shown = textOf(await suite.mcp.call('get_flag', { key: 'new-search' }));
    expect(shown).toMatch(/prod: enabled, rollout 5%.*; next scheduled step \S+: rollout 25% \(4 more after it\)/);
  });

  it('passes a guard on to the service, which refuses it where no Prometheus is configured, naming the setting', async () => {
    await suite.service.flag('guarded');
    const guard = { query: 'sum(rate(http_errors_total[5m]))', max: 0.05 };
    const result = await suite.mcp.call('schedule_rollout', { key: 'guarded', env: 'prod', startPct: 5, stepPct: 45, every: '1h', guard });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^invalid_input: guard: a guard needs FLAGOPS_PROMETHEUS_URL/);
    expect((await read('guarded')).environments.prod.schedule).toEqual([]);
  });

  it('refuses a guard the service would refuse before sending it: no bound, min above max, an interval over a day', async () => {
    await suite.service.flag('unbounded');
    for (const [guard, words] of [
      [{ query: 'up' }, /give max, min or both/],
      [{ query: 'up', min: 2, max: 1 }, /min must be at most max/],
      [{ query: 'up', max: 1, intervalSeconds: 86_401 }, /intervalSeconds/],
      [{ query: 'x'.repeat(4097), max: 1 }, /query/],
    ] as const) {
      const result = await suite.mcp.call('schedule_rollout', {
        key: 'unbounded',
        env: 'dev',
        startPct: 5,
        stepPct: 50,
        every: '1h',
        guard,
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/Input validation error/);
      expect(textOf(result)).toMatch(words);
    }
    expect((await read('unbounded')).environments.dev.schedule).toEqual([]);
  });

  it('is refused, naming the field, for a plan of more than 50 steps', async () => {
    await suite.service.flag('too-slow');
    const result = await suite.mcp.call('schedule_rollout', { key: 'too-slow', env: 'dev', startPct: 0, stepPct: 1, every: '1m' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^invalid_input: stepPct: /);
    expect((await read('too-slow')).environments.dev.schedule).toEqual([]);
  });

  it('has its steps applied by the scheduler, which get_audit_log names as the actor; a trigger’s kill is there too', async () => {
    const flag = await suite.service.flag('quick');
    await suite.mcp.call('schedule_rollout', { key: 'quick', env: 'dev', startPct: 10, stepPct: 90, every: '2s' });
    for (let i = 0; i < 100 && (await read('quick')).environments.dev.rolloutPct !== 100; i++) await sleep(100);
    expect((await read('quick')).environments.dev).toMatchObject({ rolloutPct: 100, schedule: [] });
    const log = textOf(await suite.mcp.call('get_audit_log', { key: 'quick', action: 'scheduled_change' }));
    expect(log).toMatch(/scheduled_change quick in dev by scheduler \[commit [0-9a-f]{12}\]/);

    const trigger = (await suite.service.admin.post(`/api/v1/flags/${flag.id}/environments/dev/triggers`, { name: 'error budget' })).body;
    const fired = await fetch(trigger.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'firing', commonAnnotations: { summary: 'error budget burning' } }),
    });
    expect(fired.status).toBe(202);
    const kills = textOf(await suite.mcp.call('get_audit_log', { key: 'quick', action: 'kill' }));
    expect(kills).toMatch(/kill quick in dev by trigger error budget — reason: error budget burning/);
  });
});
