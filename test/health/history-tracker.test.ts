import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HistoryTracker } from '../../src/features/health/history-tracker.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { coldRepository, commitHistory, configYaml, flagYaml, git, projectYaml, tempDir } from '../storage/helpers.js';

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

describe('the flag history tracker', () => {
  it('reads when each flag was made and since when each environment serves what it serves', async () => {
    const { gitdir } = await history();
    const tracker = await HistoryTracker.open({ repo: await coldRepository(gitdir) });
    const { history: h } = await tracker.current();
    expect(h.flags.get('shop/a')).toMatchObject({ createdAt: at(0), since: { dev: at(0), staging: at(0), prod: at(4) } });
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
});
