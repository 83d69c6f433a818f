import { describe, expect, it } from 'vitest';
import { KillSwitch } from '../../src/features/kill/kill-switch.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { admin, agent, apiCommit, configYaml, openIndex, openRepository, START, seedShop } from './fixtures.js';

const minute = (n: number) => new Date(START + n * 60_000).toISOString();

describe('a commit made by the control plane', () => {
  it('is one entry read from its Flagops trailers: action, project, flag, environment, actor with key prefix', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const commit = await apiCommit(
      repo,
      [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: true, version: 2 }) }],
      {
        action: 'config_update',
        summary: 'enable a in prod',
        project: 'shop',
        flag: 'a',
        environment: 'prod',
      },
    );
    const index = await openIndex(repo);
    const { entries } = await index.query({ limit: 1 });
    expect(entries).toEqual([
      {
        id: commit,
        at: minute(3),
        action: 'config_update',
        projectSlug: 'shop',
        flagKey: 'a',
        environment: 'prod',
        actor: { type: 'agent', name: 'deploy-bot', keyPrefix: 'svc_agt_3kq9x2ab' },
        message: 'enable a in prod',
      },
    ]);
  });

  it('records a kill made through the kill switch with its reason, who and where', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const kills = new KillSwitch({ applyKills: async () => {} }, { clock: () => new Date(START) });
    const { commit } = await kills.kill({
      org: 'acme',
      repo,
      projectSlug: 'shop',
      flagKey: 'b',
      environment: 'staging',
      actor: agent,
      reason: 'error rate above 5%',
    });

    const { entries } = await index.query({ limit: 1 });
    expect(entries[0]).toMatchObject({
      id: commit,
      action: 'kill',
      projectSlug: 'shop',
      flagKey: 'b',
      environment: 'staging',
      actor: { type: 'agent', keyPrefix: 'svc_agt_3kq9x2ab', name: 'deploy-bot' },
      reason: 'error rate above 5%',
      message: 'kill b in staging',
    });

    await kills.clear({ org: 'acme', repo, projectSlug: 'shop', flagKey: 'b', environment: 'staging', actor: admin });
    const cleared = (await index.query({ limit: 1 })).entries[0];
    expect(cleared).toMatchObject({
      action: 'clear_kill',
      flagKey: 'b',
      environment: 'staging',
      actor: { type: 'admin', keyPrefix: 'svc_adm_7hd82kqa' },
    });
    expect(cleared.reason).toBeUndefined();
  });

  it('keeps fromEnvironment for a promotion', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    await apiCommit(
      repo,
      [{ path: layout.configFile('shop', 'staging', 'a'), content: configYaml({ enabled: true, rolloutPct: 30, version: 2 }) }],
      {
        action: 'config_update',
        project: 'shop',
        flag: 'a',
        environment: 'staging',
      },
    );
    await apiCommit(
      repo,
      [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: true, rolloutPct: 30, version: 2 }) }],
      {
        action: 'promote',
        actor: admin,
        project: 'shop',
        flag: 'a',
        environment: 'prod',
        fromEnvironment: 'staging',
      },
    );
    const index = await openIndex(repo);
    expect((await index.query({ limit: 1 })).entries[0]).toMatchObject({
      action: 'promote',
      environment: 'prod',
      fromEnvironment: 'staging',
      actor: { type: 'admin' },
    });
  });

  it('gives a session actor its name and no key prefix, and project-wide actions null flag and environment', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    await apiCommit(repo, [{ path: layout.projectFile('web'), content: 'id: prj_web\nname: Web\nslug: web\n' }], {
      action: 'project_create',
      actor: { type: 'session', name: 'Alice Admin', email: 'alice@example.com' },
      project: 'web',
    });
    const index = await openIndex(repo);
    const [entry] = (await index.query({ limit: 1 })).entries;
    expect(entry).toMatchObject({
      action: 'project_create',
      projectSlug: 'web',
      flagKey: null,
      environment: null,
      actor: { type: 'session', name: 'Alice Admin' },
    });
    expect(entry.actor).not.toHaveProperty('keyPrefix');
  });

  it('lists every commit of main once, newest first, in commit order', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const { entries, nextCursor } = await index.query({ limit: 10 });
    expect(entries.map((e) => [e.action, e.flagKey])).toEqual([
      ['flag_create', 'b'],
      ['flag_create', 'a'],
      ['project_create', null],
    ]);
    expect(entries.map((e) => e.at)).toEqual([minute(2), minute(1), minute(0)]);
    expect(nextCursor).toBeNull();
  });
});
