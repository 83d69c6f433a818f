import { describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import {
  Checkout,
  configYaml,
  erin,
  flagYaml,
  killsYaml,
  newFlagFiles,
  openIndex,
  openRepository,
  projectYaml,
  sam,
  seedShop,
} from './fixtures.js';

/** Contract §2: a change pushed by an engineer appears in the audit trail too, attributed to its git author. */
describe('a commit pushed by an engineer (no Flagops trailers)', () => {
  it('is attributed to its git author and described from its diff: a config edit is config_update', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const checkout = Checkout.of(repo).write(
      layout.configFile('shop', 'prod', 'a'),
      configYaml({ enabled: true, rolloutPct: 25, version: 2 }),
    );
    const commit = checkout.commit('Roll a out to 25% in prod');
    await checkout.push(repo);

    const { entries } = await index.query({ limit: 10 });
    expect(entries[0]).toEqual({
      id: commit,
      at: '2026-01-02T09:00:00.000Z',
      action: 'config_update',
      projectSlug: 'shop',
      flagKey: 'a',
      environment: 'prod',
      actor: { type: 'git', name: 'Erin Engineer' },
      message: 'Roll a out to 25% in prod',
    });
    expect(entries[1].action).toBe('flag_create');
  });

  it('turns a kills.yaml edit into kill and clear_kill per flag, with the reason the kill entry gives', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const checkout = Checkout.of(repo);
    const killed = checkout
      .write(layout.killsFile('shop', 'prod'), killsYaml({ a: { by: 'erin', reason: 'payments failing' }, b: { by: 'erin' } }))
      .commit('Kill a and b in prod');
    await checkout.push(repo);
    const cleared = checkout.write(layout.killsFile('shop', 'prod'), killsYaml({ b: { by: 'erin' } })).commit('Bring a back', sam);
    await checkout.push(repo);

    const { entries } = await index.query({ limit: 3 });
    expect(entries.map((e) => [e.id, e.action, e.flagKey, e.environment, e.actor.name, e.reason])).toEqual([
      [cleared, 'clear_kill', 'a', 'prod', 'Sam Reviewer', undefined],
      [killed, 'kill', 'a', 'prod', 'Erin Engineer', 'payments failing'],
      [killed, 'kill', 'b', 'prod', 'Erin Engineer', undefined],
    ]);
  });

  it('takes a kill reason from a "reason:" line of the message when kills.yaml gives none', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const checkout = Checkout.of(repo).write(layout.killsFile('shop', 'dev'), killsYaml({ b: { by: 'erin' } }));
    checkout.commit('Kill b in dev\n\nreason: memory leak in the new path');
    await checkout.push(repo);
    expect((await index.query({ limit: 1 })).entries[0]).toMatchObject({
      action: 'kill',
      flagKey: 'b',
      environment: 'dev',
      reason: 'memory leak in the new path',
    });
  });

  it('gives one entry per (project, flag, environment) a commit changed, all with the commit id', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const checkout = Checkout.of(repo)
      .write(layout.configFile('shop', 'dev', 'a'), configYaml({ enabled: true, version: 2 }))
      .write(layout.configFile('shop', 'prod', 'a'), configYaml({ enabled: true, version: 2 }))
      .write(layout.configFile('shop', 'staging', 'b'), configYaml({ rolloutPct: 5, version: 2 }));
    const commit = checkout.commit('Enable a, start b');
    await checkout.push(repo);
    const { entries } = await index.query({ limit: 3 });
    expect(entries.map((e) => [e.id, e.action, e.flagKey, e.environment])).toEqual([
      [commit, 'config_update', 'a', 'dev'],
      [commit, 'config_update', 'a', 'prod'],
      [commit, 'config_update', 'b', 'staging'],
    ]);
  });

  it('calls a new flag file with its configs one flag_create, and a new project.yaml project_create', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const checkout = Checkout.of(repo).write(layout.projectFile('web'), projectYaml('web'));
    for (const file of newFlagFiles('web', 'banner')) checkout.write(file.path, file.content!);
    checkout.commit('Add the web project with its banner flag');
    await checkout.push(repo);
    const { entries } = await index.query({ limit: 2, projectSlug: 'web' });
    expect(entries.map((e) => [e.action, e.projectSlug, e.flagKey, e.environment])).toEqual([
      ['project_create', 'web', null, null],
      ['flag_create', 'web', 'banner', null],
    ]);
  });

  it('tells archiving a flag (archivedAt newly set) from other flag file edits, and sees deletions', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const checkout = Checkout.of(repo);
    checkout
      .write(layout.flagFile('shop', 'a'), flagYaml('a').replace('kind: boolean', 'name: Flag A\nkind: boolean'))
      .commit('Name flag a');
    checkout.write(layout.flagFile('shop', 'a'), flagYaml('a', '"2026-01-03T00:00:00Z"')).commit('Archive a');
    for (const file of newFlagFiles('shop', 'b')) checkout.remove(file.path);
    checkout.commit('Delete b');
    await checkout.push(repo);
    const { entries } = await index.query({ limit: 3 });
    expect(entries.map((e) => [e.action, e.flagKey, e.environment])).toEqual([
      ['flag_delete', 'b', null],
      ['flag_archive', 'a', null],
      ['flag_update', 'a', null],
    ]);
  });

  it('describes a merge commit by its diff against the first parent, attributed to whoever merged', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const checkout = Checkout.of(repo);
    checkout.git(['checkout', '--quiet', '-b', 'ramp-b']);
    checkout
      .write(layout.configFile('shop', 'prod', 'b'), configYaml({ enabled: true, rolloutPct: 10, version: 2 }))
      .commit('Ramp b to 10%');
    checkout
      .write(layout.configFile('shop', 'prod', 'b'), configYaml({ enabled: true, rolloutPct: 20, version: 3 }))
      .commit('Ramp b to 20%');
    checkout.git(['checkout', '--quiet', 'main']);
    checkout.git(['merge', '--quiet', '--no-ff', '-m', 'Merge pull request #7 from erin/ramp-b', 'ramp-b'], sam);
    const merge = checkout.git(['rev-parse', 'HEAD']);
    await checkout.push(repo);

    const { entries } = await index.query({ limit: 10 });
    expect(entries[0]).toMatchObject({
      id: merge,
      action: 'config_update',
      flagKey: 'b',
      environment: 'prod',
      actor: { type: 'git', name: 'Sam Reviewer' },
    });
    expect(entries[0].message).toBe('Merge pull request #7 from erin/ramp-b');
    // The branch's own commits are not on main's first-parent line: the merge stands for them.
    expect(entries.filter((e) => e.message?.startsWith('Ramp b'))).toEqual([]);
    expect(entries).toHaveLength(4);
  });

  it('still lists a commit that changed no flag file, as a change with no project', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const checkout = Checkout.of(repo).write('README.md', '# Our flags\n');
    const commit = checkout.commit('Add a readme');
    await checkout.push(repo);
    expect((await index.query({ limit: 1 })).entries[0]).toMatchObject({
      id: commit,
      action: 'change',
      projectSlug: null,
      flagKey: null,
      environment: null,
      actor: { type: 'git', name: erin.name },
    });
  });

  it('indexes pushed history read at open just as when it arrives afterwards', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const following = await openIndex(repo);
    const checkout = Checkout.of(repo).write(layout.killsFile('shop', 'staging'), killsYaml({ a: { by: 'erin', reason: 'flaky' } }));
    checkout.commit('Kill a in staging');
    await checkout.push(repo);
    const atOpen = await openIndex(repo);
    expect(await atOpen.query({ limit: 50 })).toEqual(await following.query({ limit: 50 }));
  });
});

describe('segment files pushed by an engineer', () => {
  it('are segment_update when added or changed and segment_delete when deleted, with segmentKey', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const checkout = Checkout.of(repo);
    const added = checkout.write(layout.segmentFile('shop', 'beta-testers'), 'key: beta-testers\nuserIds: [ana]\n').commit('Beta testers');
    await checkout.push(repo);
    const removed = checkout.remove(layout.segmentFile('shop', 'beta-testers')).commit('No more beta');
    await checkout.push(repo);

    const { entries } = await index.query({ limit: 2 });
    expect(entries.map((e) => [e.id, e.action, e.projectSlug, e.segmentKey, e.flagKey, e.actor.type])).toEqual([
      [removed, 'segment_delete', 'shop', 'beta-testers', null, 'git'],
      [added, 'segment_update', 'shop', 'beta-testers', null, 'git'],
    ]);
  });
});
