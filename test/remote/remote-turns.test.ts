import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RemoteTurns } from '../../src/features/remote/remote-turns.js';
import { type ControlState, openControlState } from '../../src/foundations/state/index.js';
import type { UpdateResult } from '../../src/foundations/storage/index.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';

/** What an update that made commit `commit` gives back (only what the turns look at matters here). */
const committed = (commit: string): UpdateResult<string> => ({
  commit,
  parent: null,
  committed: true,
  result: commit,
  state: undefined as never,
});

describe.skipIf(POSTGRES_MISSING !== null)('turns of control planes writing to one git remote', () => {
  let cluster: PostgresCluster;
  const opened: ControlState[] = [];
  beforeAll(async () => {
    cluster = await PostgresCluster.start();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((state) => state.close()));
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  /** A control plane's turns on `url`, counting the turns it takes and recording what it caught up to. */
  async function controlPlane(url: string, name: string) {
    const state = await openControlState({ dataDir: '/nonexistent', databaseUrl: url });
    opened.push(state);
    let taken = 0;
    const caughtUp: string[][] = [];
    let queue: Promise<unknown> = Promise.resolve();
    const turns = new RemoteTurns({
      take: async (waitMs) => {
        taken++;
        return state.takeTurn('git-remote:acme', waitMs);
      },
      catchUp: async (notices) => {
        caughtUp.push([...notices]);
      },
      noticeOf: async (commit) => `${name}:${commit}`,
    });
    return {
      turns,
      caughtUp,
      get taken() {
        return taken;
      },
      /** Queues an update as the store's write queue does: one at a time, the next started as soon as one ends. */
      update(commit: string, events: string[]): Promise<UpdateResult<string>> {
        const run = queue.then(() =>
          turns.run(5_000, async () => {
            events.push(`${name} ${commit}`);
            await new Promise((resolve) => setTimeout(resolve, 5));
            return committed(commit);
          }),
        );
        queue = run.catch(() => undefined);
        return run;
      },
    };
  }

  it('updates queued behind one run in one turn, and the next holder catches up to all they pushed, in order', async () => {
    const url = await cluster.createDatabase();
    const [a, b] = [await controlPlane(url, 'a'), await controlPlane(url, 'b')];
    const events: string[] = [];
    await Promise.all(['c1', 'c2', 'c3'].map((commit) => a.update(commit, events)));
    expect(a.taken).toBe(1);
    await b.update('c4', events);
    expect(b.caughtUp).toEqual([['a:c1', 'a:c2', 'a:c3']]);
    // Taken again after the run ended: given what the other pushed since.
    await a.update('c5', events);
    expect(a.taken).toBe(2);
    expect(a.caughtUp).toEqual([['b:c4']]);
  });

  it('lets the other control plane in after 8 updates in a row, however many are queued', async () => {
    const url = await cluster.createDatabase();
    const [a, b] = [await controlPlane(url, 'a'), await controlPlane(url, 'b')];
    const events: string[] = [];
    const first = a.update('a1', events);
    await new Promise((resolve) => setTimeout(resolve, 1));
    const rest = Array.from({ length: 11 }, (_, i) => a.update(`a${i + 2}`, events));
    // Asks while the first run holds the turn: gets it when that run ends, before the rest of the queue.
    const other = b.update('b1', events);
    await Promise.all([first, ...rest, other]);
    expect(events.indexOf('b b1')).toBe(8);
    expect(b.caughtUp[0]).toHaveLength(8);
  });

  it('ends a turn whose catching up failed, so the other control plane is not kept waiting', async () => {
    const url = await cluster.createDatabase();
    const [a, b] = [await controlPlane(url, 'a'), await controlPlane(url, 'b')];
    const events: string[] = [];
    await b.update('b1', events);
    const failing = new RemoteTurns({
      take: (waitMs) => opened[0].takeTurn('git-remote:acme', waitMs),
      catchUp: async () => {
        throw new Error('the git host cannot be reached');
      },
      noticeOf: async (commit) => commit,
    });
    await expect(failing.run(5_000, async () => committed('never'))).rejects.toThrow(/cannot be reached/);
    await expect(b.update('b2', events)).resolves.toMatchObject({ commit: 'b2' });
    expect(events).toEqual(['b b1', 'b b2']);
    await a.turns.close();
  });
});
