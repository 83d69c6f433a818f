import type { AuditEntry } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { type AuditPages, type CommitLine, entriesAfterRebuild, entriesSince } from '../../src/features/webhooks/entries-since.js';

/** A trail as the index reads it, newest first, one entry per commit; `madeFrom` where a kill was made again. */
function trail(ids: Array<string | [string, string]>): AuditPages {
  const entries = ids
    .map((item) => {
      const [id, madeFrom] = typeof item === 'string' ? [item, undefined] : item;
      return {
        id,
        at: '2026-11-27T09:00:00.000Z',
        action: 'kill',
        projectSlug: 'shop',
        flagKey: 'a',
        environment: 'prod',
        actor: { type: 'admin' },
        ...(madeFrom ? { madeFrom } : {}),
      } as AuditEntry;
    })
    .reverse();
  return {
    query: async ({ limit, cursor }) => {
      const from = cursor === undefined ? 0 : Number(cursor);
      const page = entries.slice(from, from + limit);
      return { entries: page, nextCursor: from + limit < entries.length ? String(from + limit) : null };
    },
  };
}

/** Commits by id: each one's first parent and what it was made from. */
function line(commits: Record<string, { parent?: string; madeFrom?: string }>): CommitLine {
  return {
    readCommit: async (oid) => {
      const commit = commits[oid];
      if (!commit) throw new Error(`no commit ${oid}`);
      return { parents: commit.parent ? [commit.parent] : [], flagops: commit.madeFrom ? { madeFrom: commit.madeFrom } : null };
    },
  };
}

describe('the entries to deliver after main was rebuilt under the last one delivered', () => {
  // Before the outage main was h0. Here, while the git host was down: x1 (a kill made here), z1 (another control
  // plane's kill w1, made here from its record): both delivered. Meanwhile the host got e1 (an engineer's merge).
  // Once it answered, main was rebuilt on e1: y1 (x1 made again), y2 (w1 made again).
  const commits = {
    h0: {},
    x1: { parent: 'h0' },
    z1: { parent: 'x1', madeFrom: 'w1' },
    e1: { parent: 'h0' },
    y1: { parent: 'e1', madeFrom: 'x1' },
    y2: { parent: 'y1', madeFrom: 'w1' },
  };
  const rebuilt = trail(['h0', 'e1', ['y1', 'x1'], ['y2', 'w1']]);

  it('is not found by the usual reading, which says the position is gone', async () => {
    expect(await entriesSince(rebuilt, 'z1', 100)).toMatchObject({ entries: [], gone: true });
  });

  it('is what the git host got meanwhile, and not the kills delivered already under the ids they had', async () => {
    const { newest, entries, skipped } = await entriesAfterRebuild(rebuilt, line(commits), 'z1', 100);
    expect(skipped).toBeUndefined();
    expect(newest).toBe('y2');
    expect(entries.map((e) => e.id)).toEqual(['e1']);
  });

  it('delivers a kill made again whose first making was not delivered here', async () => {
    // Only x1 was delivered before the rebuild (z1 came after the last reading).
    const { entries } = await entriesAfterRebuild(rebuilt, line(commits), 'x1', 100);
    expect(entries.map((e) => e.id)).toEqual(['e1', 'y2']);
  });

  it('is skipped, saying so, when nothing of the old line is on main within reach', async () => {
    const { entries, skipped } = await entriesAfterRebuild(trail(['q1', 'q2']), line(commits), 'z1', 100);
    expect(entries).toEqual([]);
    expect(skipped).toContain('no longer on main');
  });
});
