import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GO_ENV, GO_MISSING, GO_SDK, PYTHON_MISSING, PYTHON_SDK, ROOT, runTool } from '../helpers/sdk-tools.js';
import { ADMIN_KEY, type SdkHarness, startSdkHarness } from '../sdk/sdk-harness.js';
import { tourFlags } from '../sdk/tour-data.js';
import { tempDir } from './sdk-fixture.js';

/**
 * Exposures and track events from the Go and Python SDKs reach the real service: the events examples of
 * docs/sdk-go.md and docs/sdk-python.md (100 users of the tour's checkout-v2, each evaluated twice; a track event
 * per user served `on`, and one signup), run against it, then read back from the flag stats and the project's events.
 * Their evaluation counts (on by default) are read back too: two evaluations per user.
 */
describe.skipIf(PYTHON_MISSING !== null && GO_MISSING !== null)('events from the Go and Python SDKs, read back from the service', () => {
  let h: SdkHarness;
  let tmp: { dir: string; remove: () => Promise<void> };

  const api = async (route: string) => {
    const res = await fetch(`${h.service.controlUrl}${route}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(res.status).toBe(200);
    return res.json();
  };
  /**
   * What the service counted so far: evaluations and exposures of checkout-v2 in prod per variation, and track
   * events per name.
   */
  async function counted() {
    const exposures: Record<string, number> = {};
    const evaluations: Record<string, number> = {};
    for (const { exposures: hour, variations } of (await api('/api/v1/flags/flg_shop_checkout-v2/environments/prod/stats')).series) {
      for (const [variation, n] of Object.entries(hour as Record<string, number>)) exposures[variation] = (exposures[variation] ?? 0) + n;
      for (const [variation, n] of Object.entries(variations as Record<string, number>))
        evaluations[variation] = (evaluations[variation] ?? 0) + n;
    }
    const track: Record<string, { count: number; sum: number }> = {};
    for (const { counts } of (await api('/api/v1/projects/prj_shop/events?environment=prod')).series)
      for (const [name, c] of Object.entries(counts as Record<string, { count: number; sum: number }>)) {
        track[name] = { count: (track[name]?.count ?? 0) + c.count, sum: (track[name]?.sum ?? 0) + c.sum };
      }
    return { exposures, evaluations, track };
  }

  /** The difference the program made: exposures per variation equal to what it was served, one track event per `on`. */
  async function expectCounted(before: Awaited<ReturnType<typeof counted>>, served: Record<string, number>) {
    const after = await counted();
    const exposures = Object.fromEntries(Object.entries(after.exposures).map(([v, n]) => [v, n - (before.exposures[v] ?? 0)]));
    expect(exposures).toEqual(served);
    const evaluations = Object.fromEntries(Object.entries(after.evaluations).map(([v, n]) => [v, n - (before.evaluations[v] ?? 0)]));
    expect(evaluations).toEqual(Object.fromEntries(Object.entries(served).map(([v, n]) => [v, 2 * n])));
    const grew = (name: string) => ({
      count: after.track[name].count - (before.track[name]?.count ?? 0),
      sum: after.track[name].sum - (before.track[name]?.sum ?? 0),
    });
    expect(grew('checkout-completed')).toEqual({ count: served.on, sum: 42.5 * served.on });
    expect(grew('signup')).toEqual({ count: 1, sum: 0 });
  }

  beforeAll(async () => {
    h = await startSdkHarness(tourFlags());
    tmp = await tempDir('flagops-sdk-events-');
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
    await tmp?.remove();
  });

  it.skipIf(GO_MISSING !== null)(
    'the Go SDK: go run ./examples/events',
    async () => {
      const before = await counted();
      const ran = await runTool('go', ['run', './examples/events'], {
        cwd: GO_SDK,
        env: { ...GO_ENV, FLAGOPS_EVAL_URL: h.service.evalUrl, FLAGOPS_SDK_KEY: h.key },
        timeoutMs: 240_000,
      });
      expect(ran.code, ran.stderr).toBe(0);
      const [, off, on] = /served: map\[off:(\d+) on:(\d+)\]/.exec(ran.stdout) ?? [];
      expect(ran.stdout).toContain('events: {Sent:150 Dropped:0 Rejected:0}');
      await expectCounted(before, { off: Number(off), on: Number(on) });
    },
    300_000,
  );

  it.skipIf(PYTHON_MISSING !== null)(
    'the Python SDK: the events example of docs/sdk-python.md',
    async () => {
      const docs = readFileSync(path.join(ROOT, 'docs', 'sdk-python.md'), 'utf8');
      const code = /<!-- snippet: python-events -->\s*```python\n([\s\S]*?)```/.exec(docs)?.[1];
      expect(code).toBeDefined();
      const file = path.join(tmp.dir, 'events.py');
      await writeFile(file, (code as string).replaceAll('http://127.0.0.1:4001', h.service.evalUrl));
      const before = await counted();
      const ran = await runTool('python3', [file], {
        cwd: tmp.dir,
        env: { ...process.env, PYTHONPATH: PYTHON_SDK, FLAGOPS_SDK_KEY: h.key, PYTHONDONTWRITEBYTECODE: '1' },
        timeoutMs: 60_000,
      });
      expect(ran.code, ran.stderr).toBe(0);
      const served = Object.fromEntries(
        [...ran.stdout.matchAll(/\('(\w+)', (\d+)\)/g)].map(([, variation, n]) => [variation, Number(n)]),
      ) as Record<string, number>;
      expect(Object.keys(served).sort()).toEqual(['off', 'on']);
      expect(ran.stdout).toContain('EventStats(sent=150, dropped=0, rejected=0)');
      await expectCounted(before, served);
    },
    90_000,
  );
});
