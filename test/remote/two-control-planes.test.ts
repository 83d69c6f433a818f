import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/auth/key-format.js';
import type { Config } from '../../src/config/config.js';
import { silentLogger } from '../../src/log/logger.js';
import { type Service, startService } from '../../src/service.js';
import { parseCommitMessage, readFlagopsTrailers } from '../../src/storage/index.js';
import { git } from '../helpers/git-cli.js';
import { httpClient } from '../helpers/http-client.js';
import { startGitServer } from './git-server.js';

const FLAGS = 8;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
  const adminKey = generateKey('admin');

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
      };
      services.push(await startService(config, silentLogger));
    }
  });
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await host.stop();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('apply each scheduled step exactly once, whichever gets there first', async () => {
    const [a, b] = services.map((s) => httpClient(s.controlUrl, adminKey));
    const project = (await a.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    const ids: string[] = [];
    for (let i = 0; i < FLAGS; i++) ids.push((await a.post(`/api/v1/projects/${project.id}/flags`, { key: `f${i}` })).body.id);
    // Every write is pushed to the git host first: leave time for them and for the other control plane's poll.
    const due = Date.now() + 8_000;
    const at = (offset: number) => new Date(due + offset).toISOString();
    for (const id of ids) {
      const schedule = [
        { at: at(0), set: { enabled: true, rolloutPct: 10 } },
        { at: at(500), set: { rolloutPct: 60 } },
      ];
      expect((await a.put(`/api/v1/flags/${id}/environments/prod/config`, { schedule })).status).toBe(200);
    }
    // The second control plane learns of the schedules from the remote, by its poll, before they fall due.
    for (;;) {
      const seen = await b.get(`/api/v1/flags/${ids[FLAGS - 1]}`);
      if (seen.status === 200 && seen.body.environments.prod.schedule.length === 2) break;
      expect(Date.now()).toBeLessThan(due);
      await sleep(100);
    }
    for (;;) {
      const applied = schedulerCommits(host.gitdir).length;
      if (applied >= 2 * FLAGS) break;
      expect(Date.now()).toBeLessThan(due + 20_000);
      await sleep(200);
    }
    await sleep(2_500); // a late duplicate would have landed by now: both schedulers run within 5 s of each step
    const commits = schedulerCommits(host.gitdir);
    expect(commits.sort()).toEqual(
      Array.from({ length: FLAGS }, (_, i) => [`scheduled_change f${i} prod`, `scheduled_change f${i} prod`])
        .flat()
        .sort(),
    );
    for (const client of [a, b]) {
      for (;;) {
        const prod = (await client.get(`/api/v1/flags/${ids[0]}`)).body.environments.prod;
        if (prod.schedule.length === 0) {
          expect(prod).toMatchObject({ enabled: true, rolloutPct: 60, version: 4 });
          break;
        }
        await sleep(200);
      }
    }
  }, 60_000);
});
