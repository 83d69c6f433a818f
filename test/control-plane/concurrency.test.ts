import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { commitCount, createFlag, createProject } from './fixtures.js';

const FLAGS = 50;

describe('concurrent writes (every change is one commit)', () => {
  let svc: TestService;
  let api: HttpClient;
  let flags: Json[];
  beforeAll(async () => {
    svc = await startTestService();
    api = httpClient(svc.controlUrl, svc.agent);
    const project = await createProject(httpClient(svc.controlUrl, svc.admin), 'shop');
    flags = [];
    for (let i = 0; i < FLAGS; i++) flags.push(await createFlag(api, project.id, { key: `flag-${i}` }));
  }, 120_000);
  afterAll(() => svc.stop());

  it(`${FLAGS} kills and ${FLAGS} config updates at once, on different flags: every one is on main, one commit each`, async () => {
    const before = commitCount(svc.gitdir());
    const responses = await Promise.all(
      flags.flatMap((flag, i) => [
        api.post(`/api/v1/flags/${flag.id}/environments/prod/kill`),
        api.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { enabled: true, rolloutPct: i + 1 }),
      ]),
    );
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));

    const { state } = await svc.service.repos.get('acme').then((repo) => repo.readState());
    const shop = state.projects.get('shop')!;
    flags.forEach((flag, i) => {
      expect(shop.kills.prod.kills[flag.key], flag.key).toBeDefined();
      expect(shop.flags.get(flag.key)!.environments.dev).toMatchObject({ enabled: true, rolloutPct: i + 1, version: 2 });
    });

    expect(commitCount(svc.gitdir())).toBe(before + 2 * FLAGS);
    const log = git(
      svc.gitdir(),
      'log',
      `-${2 * FLAGS}`,
      '--format=%(trailers:key=Flagops-Action,valueonly,separator=)/%(trailers:key=Flagops-Flag,valueonly,separator=)',
      'main',
    );
    const changes = log.split('\n').filter(Boolean);
    expect(new Set(changes).size).toBe(2 * FLAGS);
    for (const flag of flags) {
      expect(changes).toContain(`kill/${flag.key}`);
      expect(changes).toContain(`config_update/${flag.key}`);
    }
  }, 120_000);
});
