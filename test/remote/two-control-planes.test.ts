import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import type { Config } from '../../src/foundations/config/config.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { parseCommitMessage, readFlagopsTrailers } from '../../src/foundations/storage/index.js';
import { type Service, startService } from '../../src/service.js';
import { until } from '../helpers/deadlines.js';
import { git } from '../helpers/git-cli.js';
import { httpClient } from '../helpers/http-client.js';
import { ManualClock } from '../schedule/manual-clock.js';
import { startGitServer } from './git-server.js';

const FLAGS = 8;
const SIGNING_KEY = 'a4c1e0f9b2d37a8e5c6f1d0b9a8e7c6d5f4e3d2c1b0a9f8e';
const HOUR = 3_600_000;

/** The scheduler's commits on the git host's main: `<action> <flag> <env>`, oldest first. */
function schedulerCommits(gitdir: string): string[] {
  return git(gitdir, 'rev-list', '--reverse', 'main')
    .split('\n')
    .flatMap((oid) => {
      const trailers = readFlagopsTrailers(parseCommitMessage(git(gitdir, 'log', '-1', '--format=%B', oid)).trailers);
      return trailers?.actor.type === 'scheduler' ? [`${trailers.action} ${trailers.flag} ${trailers.environment}`] : [];
    });
}

describe('two control planes on one git remote (remote mode)', () => {
  let host: Awaited<ReturnType<typeof startGitServer>>;
  const dirs: string[] = [];
  const services: Service[] = [];
  const stopped = new Set<Service>();
  const stop = (s: Service) => {
    stopped.add(s);
    return s.stop();
  };
  const adminKey = generateKey('admin');
  // Both schedulers on one clock the test moves: a step falls due when the test says so, not while the second
  // control plane may still be learning of it.
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    host = await startGitServer();
    for (let i = 0; i < 2; i++) {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), `flagops-two-${i}-`));
      dirs.push(dataDir);
      const config: Config = {
        dataDir,
        host: '127.0.0.1',
        controlPort: 0,
        evalPort: 0,
        bootstrapKeys: [{ org: 'acme', key: adminKey }],
        planProjectLimit: 25,
        logLevel: 'error',
        gitRemote: { url: host.url, pollSeconds: 1 },
        // As docs/audit.md asks of control planes on one remote: each believes the others' trailers (who acted).
        commitSigningKey: SIGNING_KEY,
      };
      services.push(await startService(config, silentLogger, { clock }));
    }
  });
  afterAll(async () => {
    await Promise.all(services.filter((s) => !stopped.has(s)).map(stop));
    await host.stop();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('two writes with the same expectedVersion through the two: one answers 200, the other 409', async () => {
    const [a, b] = services.map((s) => httpClient(s.controlUrl, adminKey));
    const project = (await a.post('/api/v1/projects', { name: 'Race', slug: 'race' })).body;
    const flag = (await a.post(`/api/v1/projects/${project.id}/flags`, { key: 'contested' })).body;
    await until(
      () => b.get(`/api/v1/flags/${flag.id}`),
      (seen) => seen.status === 200,
    );
    for (let round = 0; round < 5; round++) {
      const version = (await a.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.version;
      await until(
        () => b.get(`/api/v1/flags/${flag.id}`),
        (seen) => seen.body.environments?.prod.version === version,
      );
      const answers = await Promise.all(
        [a, b].map((client, i) =>
          client.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 10 * round + i + 1, expectedVersion: version }),
        ),
      );
      expect(answers.map((r) => r.status).sort(), JSON.stringify(answers.map((r) => r.body))).toEqual([200, 409]);
      const winner = answers.find((r) => r.status === 200)!;
      expect((await a.get(`/api/v1/flags/${flag.id}`)).body.environments.prod).toMatchObject({
        rolloutPct: winner.body.rolloutPct ?? winner.body.config?.rolloutPct ?? winner.body.environments?.prod?.rolloutPct,
        version: version + 1,
      });
    }
  }, 60_000);

  it('writes to different flags through the two at once all answer 200, and both are on the git host', async () => {
    const [a, b] = services.map((s) => httpClient(s.controlUrl, adminKey));
    const project = (await a.post('/api/v1/projects', { name: 'Busy', slug: 'busy' })).body;
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await a.post(`/api/v1/projects/${project.id}/flags`, { key: `busy-${i}` })).body.id);
    await until(
      () => b.get(`/api/v1/flags/${ids[5]}`),
      (seen) => seen.status === 200,
    );
    const answers = await Promise.all(
      ids.map((id, i) => (i % 2 === 0 ? a : b).put(`/api/v1/flags/${id}/environments/prod/config`, { rolloutPct: 40 + i })),
    );
    expect(
      answers.map((r) => r.status),
      JSON.stringify(answers.map((r) => r.body)),
    ).toEqual(ids.map(() => 200));
    for (const [i, id] of ids.entries()) {
      const file = git(host.gitdir, 'show', `main:projects/busy/environments/prod/busy-${i}.yaml`);
      expect(file, id).toContain(`rolloutPct: ${40 + i}`);
    }
  }, 60_000);

  it('share one budget: a change through one counts at the other, and two racing changes past it are not both applied', async () => {
    const [a, b] = services.map((s) => httpClient(s.controlUrl, adminKey));
    const project = (await a.post('/api/v1/projects', { name: 'Budget', slug: 'budget' })).body;
    expect(
      (await a.patch(`/api/v1/projects/${project.id}`, { budgets: { prod: { movedPctPerHour: 10, actors: ['admin'] } } })).status,
    ).toBe(200);
    const flags: Array<{ id: string }> = [];
    for (const key of ['left', 'right', 'first']) flags.push((await a.post(`/api/v1/projects/${project.id}/flags`, { key })).body);
    expect((await a.put(`/api/v1/flags/${flags[2].id}/environments/prod/config`, { enabled: true, rolloutPct: 4 })).status).toBe(200);
    await until(
      async () => (await b.get(`/api/v1/projects/${project.id}/budgets`)).body.budgets?.[0]?.usedPct,
      (used) => used === 4,
    );
    // 4 % used, 6 % left: two changes of 5 % at once, one through each, cannot both go through.
    const answers = await Promise.all(
      [a, b].map((client, i) => client.put(`/api/v1/flags/${flags[i].id}/environments/prod/config`, { enabled: true, rolloutPct: 5 })),
    );
    expect(answers.map((r) => r.status).sort(), JSON.stringify(answers.map((r) => r.body))).toEqual([200, 202]);
    const waiting = answers.find((r) => r.status === 202)!.body.proposal;
    expect(waiting.budget).toMatchObject({ usedPct: 9, addsPct: 5, movedPctPerHour: 10 });
    for (const client of [a, b])
      await until(
        async () => (await client.get(`/api/v1/projects/${project.id}/budgets`)).body.budgets[0].usedPct,
        (used) => used === 9,
      );
  }, 60_000);

  it('apply each scheduled step exactly once, whichever gets there first', async () => {
    const [a, b] = services.map((s) => httpClient(s.controlUrl, adminKey));
    const project = (await a.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    const ids: string[] = [];
    for (let i = 0; i < FLAGS; i++) ids.push((await a.post(`/api/v1/projects/${project.id}/flags`, { key: `f${i}` })).body.id);
    const due = clock.now().getTime() + HOUR;
    const at = (offset: number) => new Date(due + offset).toISOString();
    for (const id of ids) {
      const schedule = [
        { at: at(0), set: { enabled: true, rolloutPct: 10 } },
        { at: at(500), set: { rolloutPct: 60 } },
      ];
      expect((await a.put(`/api/v1/flags/${id}/environments/prod/config`, { schedule })).status).toBe(200);
    }
    // The second control plane learns of the schedules from the remote, by its poll; the clock stands still.
    await until(
      () => b.get(`/api/v1/flags/${ids[FLAGS - 1]}`),
      (seen) => seen.status === 200 && seen.body.environments.prod.schedule.length === 2,
    );
    // Both schedulers wake for the steps and race to apply them. The clock moves on in seconds while the test
    // waits: what a scheduler arms after a run (the next step, a retry after its push lost the race) falls due.
    clock.advance(HOUR);
    const tick = async () => {
      clock.advance(1_000);
      return schedulerCommits(host.gitdir).length;
    };
    await until(tick, (applied) => applied >= 2 * FLAGS, 30_000);
    for (const client of [a, b]) {
      const prod = await until(
        async () => {
          clock.advance(1_000);
          return (await client.get(`/api/v1/flags/${ids[0]}`)).body.environments.prod;
        },
        (env) => env.schedule.length === 0,
      );
      expect(prod).toMatchObject({ enabled: true, rolloutPct: 60, version: 4 });
    }
    // Stopping waits for a scheduler's run in progress, and a stopped one commits nothing more: after the
    // stops, the git host holds every commit there will ever be.
    await Promise.all(services.map(stop));
    const commits = schedulerCommits(host.gitdir);
    expect(commits.sort()).toEqual(
      Array.from({ length: FLAGS }, (_, i) => [`scheduled_change f${i} prod`, `scheduled_change f${i} prod`])
        .flat()
        .sort(),
    );
  }, 60_000);
});
