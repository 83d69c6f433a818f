import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type HistorySource, HistoryTracker } from '../../src/features/health/history-tracker.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { coldRepository, commitHistory, configYaml, type Files, flagYaml, git, projectYaml, tempDir, waitFor } from '../storage/helpers.js';

const T = 1_700_000_000_000; // commit i is made at T + i seconds
const at = (i: number) => T + i * 1000;
const prod = layout.configFile('shop', 'prod', 'a');

/** project shop with flag a; prod on at 100 %, then an edit serving the same, then a kill, then a clear. */
async function history() {
  return commitHistory([
    {
      [layout.projectFile('shop')]: projectYaml('shop'),
      [layout.flagFile('shop', 'a')]: flagYaml('a'),
      [layout.configFile('shop', 'dev', 'a')]: configYaml(),
      [layout.configFile('shop', 'staging', 'a')]: configYaml(),
      [prod]: configYaml(),
    },
    { [prod]: configYaml({ enabled: true, rolloutPct: 100, version: 2 }) },
    { [prod]: configYaml({ enabled: true, rolloutPct: 100, version: 3 }) },
    { [layout.killsFile('shop', 'prod')]: 'kills:\n  a:\n    killedAt: "2023-11-14T00:00:00Z"\n    killedBy: ops\n' },
    { [layout.killsFile('shop', 'prod')]: 'kills: {}\n' },
  ]);
}

/** Flags a and b; then 40 commits changing their prod configs and kills in turn. */
async function longHistory() {
  const commits: Files[] = [
    {
      [layout.projectFile('shop')]: projectYaml('shop'),
      ...Object.fromEntries(
        ['a', 'b'].flatMap((key) => [
          [layout.flagFile('shop', key), flagYaml(key)],
          ...(['dev', 'staging', 'prod'] as const).map((env) => [layout.configFile('shop', env, key), configYaml()]),
        ]),
      ),
    },
  ];
  for (let i = 1; i <= 40; i++) {
    const key = i % 2 === 0 ? 'a' : 'b';
    commits.push(
      i % 5 === 0
        ? {
            [layout.killsFile('shop', 'prod')]:
              i % 10 === 0 ? 'kills: {}\n' : `kills:\n  ${key}:\n    killedAt: "2023-11-14T00:00:00Z"\n    killedBy: ops\n`,
          }
        : { [layout.configFile('shop', 'prod', key)]: configYaml({ enabled: true, rolloutPct: (i * 10) % 100, version: i + 1 }) },
    );
  }
  return commitHistory(commits);
}

/** A repository as the tracker reads it, counting the commits whose changes it reads; `holdAt` waits for `release`. */
function watched(repo: HistorySource, holdAt?: string) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const read: string[] = [];
  const source: HistorySource = {
    head: () => repo.head(),
    firstParentLog: (options) => repo.firstParentLog(options),
    changedPaths: async (oid) => {
      read.push(oid);
      if (oid === holdAt) await held;
      return repo.changedPaths(oid);
    },
    readBlob: (oid) => repo.readBlob(oid),
    onMainMoved: (listener) => repo.onMainMoved(listener),
  };
  return { source, read, release };
}

describe('the flag history tracker', () => {
  it('reads when each flag was made and since when each environment serves what it serves', async () => {
    const { gitdir } = await history();
    const tracker = await HistoryTracker.open({ repo: await coldRepository(gitdir) });
    const { history: h } = await tracker.current();
    expect(h.flags.get('shop/a')).toMatchObject({ createdAt: at(0), since: { dev: at(0), staging: at(0), prod: at(4) } });
    await tracker.close();
  });

  it('counts an archive as a change of what every environment serves: a restored flag serves its configs only since the restore', async () => {
    const on = configYaml({ enabled: true, rolloutPct: 100 });
    const archived = (defaultValue: boolean) =>
      flagYaml('a').replace('defaultValue: false\narchivedAt: null', `defaultValue: ${defaultValue}\narchivedAt: "2023-11-15T00:00:00Z"`);
    const { gitdir } = await commitHistory([
      {
        [layout.projectFile('shop')]: projectYaml('shop'),
        [layout.flagFile('shop', 'a')]: flagYaml('a'),
        ...Object.fromEntries((['dev', 'staging', 'prod'] as const).map((env) => [layout.configFile('shop', env, 'a'), on])),
      },
      // Archived: every environment serves defaultValue false instead of true.
      { [layout.flagFile('shop', 'a')]: archived(false) },
      { [layout.flagFile('shop', 'a')]: `${archived(false)}description: kept for the record\n` },
      // Restored: true again, since now.
      { [layout.flagFile('shop', 'a')]: flagYaml('a') },
      // Archived serving true, what the configs served: nothing served changed.
      { [layout.flagFile('shop', 'a')]: archived(true) },
      { [layout.flagFile('shop', 'a')]: flagYaml('a') },
    ]);
    const tracker = await HistoryTracker.open({ repo: await coldRepository(gitdir) });
    const { history: h } = await tracker.current();
    expect(h.flags.get('shop/a')).toMatchObject({ createdAt: at(0), since: { dev: at(3), staging: at(3), prod: at(3) } });
    expect(h.flags.get('shop/a')?.archivedKey).toBeUndefined();
    await tracker.close();
  });

  it('follows main a commit at a time, and reads a rewritten main again from its root', async () => {
    const { gitdir, oids } = await history();
    const repo = await coldRepository(gitdir);
    const tracker = await HistoryTracker.open({ repo });
    git(gitdir, 'update-ref', 'refs/heads/main', oids[2]);
    await repo.refresh();
    const { history: rewound } = await tracker.current();
    // The edit of commit 2 served what commit 1 did: prod has served true since commit 1.
    expect(rewound.flags.get('shop/a')?.since.prod).toBe(at(1));
    await tracker.close();
  });

  it('starts from its file on disk, reading only the commits made since', async () => {
    const { gitdir, oids } = await history();
    const cacheFile = join(tempDir(), 'health', 'acme.json');
    git(gitdir, 'update-ref', 'refs/heads/main', oids[3]);
    const first = await HistoryTracker.open({ repo: await coldRepository(gitdir), cacheFile });
    expect((await first.current()).history.flags.get('shop/a')?.since.prod).toBe(at(3));
    await first.close();
    // A mark only the file holds: read from it, the history is not read again from the root.
    writeFileSync(cacheFile, readFileSync(cacheFile, 'utf8').replace(`"createdAt":${at(0)}`, '"createdAt":42'));
    git(gitdir, 'update-ref', 'refs/heads/main', oids[4]);
    const again = await HistoryTracker.open({ repo: await coldRepository(gitdir), cacheFile });
    const { head, history: h } = await again.current();
    expect(head).toBe(oids[4]);
    expect(h.flags.get('shop/a')?.since.prod).toBe(at(4));
    expect(h.flags.get('shop/a')?.createdAt).toBe(42);
    await again.close();
  });

  it('keeps every flag and the kills in its file: a restart reads no commit and has what a full read has', async () => {
    const { gitdir, oids } = await longHistory();
    git(gitdir, 'update-ref', 'refs/heads/main', oids[35]); // b killed in prod
    const cacheFile = join(tempDir(), 'health', 'acme.json');
    const first = await HistoryTracker.open({ repo: await coldRepository(gitdir), cacheFile });
    const full = (await first.current()).history;
    expect(full.kills.get('shop/prod')).toEqual(['b']);
    await first.close();
    const restart = watched(await coldRepository(gitdir));
    const again = await HistoryTracker.open({ repo: restart.source, cacheFile });
    const { head, history } = await again.current();
    expect(head).toBe(oids[35]);
    expect(restart.read).toEqual([]);
    expect(history.toJSON()).toEqual(full.toJSON());
    await again.close();
  });

  it('writes its file during a long read, as the history of the commit it names: a restart goes on from there', async () => {
    const { gitdir, oids } = await longHistory();
    const cacheFile = join(tempDir(), 'health', 'acme.json');
    const reading = watched(await coldRepository(gitdir), oids[25]);
    const tracker = await HistoryTracker.open({ repo: reading.source, cacheFile, checkpointEvery: 10 });
    const done = tracker.current();
    // Held at commit 25: what is on disk was written while reading, at a checkpoint before it.
    const midway = await waitFor(() => (existsSync(cacheFile) ? readFileSync(cacheFile, 'utf8') : undefined));
    const named = oids.indexOf(JSON.parse(midway.split('\n')[0]).head);
    expect(named).toBeGreaterThanOrEqual(9);
    expect(named).toBeLessThan(25);
    reading.release();
    const full = (await done).history.toJSON();
    await tracker.close();
    // A crash at that moment leaves that file: a restart reads the commits after the one it names, and agrees.
    const crashed = join(tempDir(), 'crashed.json');
    writeFileSync(crashed, midway);
    const restart = watched(await coldRepository(gitdir));
    const again = await HistoryTracker.open({ repo: restart.source, cacheFile: crashed });
    expect((await again.current()).history.toJSON()).toEqual(full);
    expect(restart.read).toEqual(oids.slice(named + 1));
    await again.close();
  });

  describe('writes its file out of the way of changes', () => {
    /** The head the file names, once it exists. */
    const fileHead = (cacheFile: string) =>
      existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, 'utf8').split('\n')[0]).head : undefined;

    it('once main has been still a while, with the history of its head then', async () => {
      const { gitdir, oids } = await history();
      const cacheFile = join(tempDir(), 'health', 'acme.json');
      git(gitdir, 'update-ref', 'refs/heads/main', oids[1]);
      const repo = await coldRepository(gitdir);
      const tracker = await HistoryTracker.open({ repo, cacheFile, saveWhenStillMs: 50, saveAtMostAfterMs: 60_000 });
      await tracker.current();
      for (const oid of oids.slice(2)) {
        git(gitdir, 'update-ref', 'refs/heads/main', oid);
        await repo.refresh();
      }
      await tracker.current();
      // Written without a close: the deferred write still happens, naming the head it had then.
      expect(await waitFor(() => (fileHead(cacheFile) === oids[4] ? true : undefined))).toBe(true);
      await tracker.close();
    });

    it('while main keeps moving, at the latest a while after the first commit it has not written', async () => {
      const { gitdir, oids } = await history();
      const cacheFile = join(tempDir(), 'health', 'acme.json');
      git(gitdir, 'update-ref', 'refs/heads/main', oids[1]);
      const repo = await coldRepository(gitdir);
      // Main is never still for a minute here: only the bound writes the file.
      const tracker = await HistoryTracker.open({ repo, cacheFile, saveWhenStillMs: 60_000, saveAtMostAfterMs: 100 });
      await tracker.current();
      git(gitdir, 'update-ref', 'refs/heads/main', oids[2]);
      await repo.refresh();
      await tracker.current();
      expect(await waitFor(() => (fileHead(cacheFile) === oids[2] ? true : undefined), 3_000)).toBe(true);
      await tracker.close();
    });
  });
});
