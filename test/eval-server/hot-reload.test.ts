import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../src/foundations/repository/serialize-file.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { cloneRepo } from './git-cli.js';
import { ADMIN_KEY, commitFiles, type EvalHarness, evaluate, projectFiles, sdkKey, startHarness, within } from './harness.js';

const config = (rolloutPct: number, version: number) =>
  serializeRepositoryFile({ kind: 'config', value: { enabled: true, rolloutPct, valueOn: true, valueOff: false, version, rules: [] } });

describe('hot reload when main moves', () => {
  let h: EvalHarness;
  let key: string;
  const resultOf = async (flag: string) =>
    ((await (await evaluate(h, key, { key: flag, context: {} })).json()) as Record<string, { value: unknown }>)[flag];
  const health = async () => (await fetch(`${h.service.evalUrl}/healthz`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json();

  beforeAll(async () => {
    h = await startHarness();
    await commitFiles(
      h.repo,
      projectFiles('shop', [
        { key: 'a', rolloutPct: 0 },
        { key: 'b', rolloutPct: 0 },
      ]),
    );
    await h.service.holder.served('acme');
    key = await sdkKey(h, 'shop', 'prod');
  });
  afterAll(() => h?.stop());

  it('serves our own commit without a restart', async () => {
    await commitFiles(h.repo, [{ path: layout.configFile('shop', 'prod', 'a'), content: config(100, 2) }]);
    await within(
      PROMPTLY_MS,
      () => resultOf('a'),
      (r) => r.value === true,
    );
  });

  it('serves an engineer’s git push without a restart', async () => {
    const checkout = await cloneRepo(h.repo.gitdir);
    try {
      await checkout.write(path.join('projects/shop/environments/prod/b.yaml'), config(100, 2));
      await checkout.commitAndPush('roll b out');
      await within(
        PROMPTLY_MS,
        () => resultOf('b'),
        (r) => r.value === true,
      );
    } finally {
      await checkout.remove();
    }
  });

  it('never serves an invalid pushed file: the last valid state keeps serving and /healthz names the file', async () => {
    const checkout = await cloneRepo(h.repo.gitdir);
    try {
      await checkout.write(
        'projects/shop/environments/prod/a.yaml',
        'enabled: true\nrolloutPct: 250\nvalueOn: true\nvalueOff: false\nversion: 3\nrules: []\n',
      );
      await checkout.commitAndPush('a broken rollout');
      await within(PROMPTLY_MS, health, (body) => body.status === 'degraded');
      const report = await health();
      expect(JSON.stringify(report)).toContain('projects/shop/environments/prod/a.yaml');
      expect((await resultOf('a')).value).toBe(true);
      expect((await fetch(`${h.service.evalUrl}/healthz`)).status).toBe(200);

      await checkout.write('projects/shop/environments/prod/a.yaml', config(0, 3));
      await checkout.commitAndPush('fix the rollout');
      await within(
        PROMPTLY_MS,
        () => resultOf('a'),
        (r) => r.value === false,
      );
      expect((await health()).status).toBe('ok');
    } finally {
      await checkout.remove();
    }
  });

  it('keeps serving when a pushed file is not even YAML', async () => {
    const checkout = await cloneRepo(h.repo.gitdir);
    try {
      await checkout.write('projects/shop/environments/prod/b.yaml', 'enabled: [true\n  : :');
      await checkout.commitAndPush('garbage');
      await within(PROMPTLY_MS, health, (body) => body.status === 'degraded');
      expect((await resultOf('b')).value).toBe(true);
      await checkout.write('projects/shop/environments/prod/b.yaml', config(100, 3));
      await checkout.commitAndPush('repair');
      await within(PROMPTLY_MS, health, (body) => body.status === 'ok');
    } finally {
      await checkout.remove();
    }
  });
});
