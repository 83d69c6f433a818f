import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpClient, httpClient } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { ManualClock } from './manual-clock.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const T0 = Date.parse('2026-11-24T08:00:00Z');

/** The service on a clock the test moves: a day of a progressive rollout in no time. */
describe('the service on an injected clock', () => {
  let svc: TestService;
  let admin: HttpClient;
  const clock = new ManualClock(T0);

  beforeAll(async () => {
    svc = await startTestService({ clock });
    admin = httpClient(svc.controlUrl, svc.admin);
  });
  afterAll(() => svc?.stop());

  it('refuses steps in its past, and applies each step when its time comes', async () => {
    const projectId = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body.id;
    const flag = (await admin.post(`/api/v1/projects/${projectId}/flags`, { key: 'checkout-v2' })).body;
    const path = `/api/v1/flags/${flag.id}/environments/prod`;
    // On the wall clock this is long past; on the service's clock it is an hour ahead.
    const past = await admin.put(`${path}/config`, { schedule: [{ at: '2026-11-24T07:59:59Z', set: { rolloutPct: 5 } }] });
    expect([past.status, past.body.error.message]).toEqual([400, expect.stringContaining('schedule[0].at: must be in the future')]);
    const plan = await admin.post(`${path}/rollout-plan`, { startPct: 10, stepPct: 45, every: '1h' });
    expect(plan.body.environments.prod).toMatchObject({
      rolloutPct: 10,
      nextStep: { at: '2026-11-24T09:00:00Z', set: { rolloutPct: 55 } },
    });
    const rolloutAfter = async (ms: number) => {
      clock.advance(ms);
      for (let i = 0; i < 50; i++) {
        const prod = (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod;
        if (prod.nextStep === null || Date.parse(prod.nextStep.at) > clock.now().getTime()) return prod.rolloutPct;
        await sleep(50);
      }
      throw new Error('the due step was not applied');
    };
    expect(await rolloutAfter(59 * 60_000)).toBe(10);
    expect(await rolloutAfter(60_000)).toBe(55);
    expect(await rolloutAfter(3_600_000)).toBe(100);
    const entries = (await admin.get(`/api/v1/audit?flagId=${flag.id}&action=scheduled_change`)).body.entries;
    expect(entries.map((e: { actor: { type: string } }) => e.actor.type)).toEqual(['scheduler', 'scheduler']);
  });
});
