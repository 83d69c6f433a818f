import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RemoteTurns } from '../../src/features/remote/remote-turns.js';
import { type ControlState, openControlState } from '../../src/foundations/state/index.js';
import type { UpdateResult } from '../../src/foundations/storage/index.js';
import { until } from '../helpers/deadlines.js';
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

  /**
   * A control plane's turns on `url`, counting the turns it takes (and how many it holds at once) and recording
   * what it caught up to. Its updates take the turn, then queue as the store's write queue does: one at a time.
   */
  async function controlPlane(url: string, name: string) {
    const state = await openControlState({ dataDir: '/nonexistent', databaseUrl: url });
    opened.push(state);
    let taken = 0;
    let holding = 0;
    let mostHeld = 0;
    const caughtUp: string[][] = [];
    let queue: Promise<unknown> = Promise.resolve();
    const queued = <T>(task: () => Promise<T>): Promise<T> => {
      const run = queue.then(task);
      queue = run.catch(() => undefined);
      return run;
    };
    const turns = new RemoteTurns({
      take: async (waitMs) => {
        taken++;
        const turn = await state.takeTurn('git-remote:acme', waitMs);
        mostHeld = Math.max(mostHeld, ++holding);
        return {
          note: turn.note,
          end: (note) => {
            holding--;
            return turn.end(note);
          },
        };
      },
      catchUp: async (notices) => {
        caughtUp.push([...notices]);
      },
      noticeOf: async (commit) => `${name}:${commit}`,
    });
    return {
      turns,
      caughtUp,
      queued,
      get taken() {
        return taken;
      },
      /** The most turns this control plane held at once. */
      get mostHeld() {
        return mostHeld;
      },
      get holding() {
        return holding;
      },
      /** An update: in the turn (waiting at most `waitMs` for it), then through the write queue. */
      update(commit: string, events: string[], waitMs = 5_000): Promise<UpdateResult<string>> {
        return turns.run(waitMs, () =>
          queued(async () => {
            events.push(`${name} ${commit}`);
            await new Promise((resolve) => setTimeout(resolve, 5));
            return committed(commit);
          }),
        );
      },
    };
  }

  /** How many wait for the turn (an advisory lock not granted yet), read by a connection of its own. */
  const waitingForTheTurn = (url: string) => async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
      return rows[0].n as number;
    } finally {
      await client.end();
    }
  };

  /** Holds the turn through a connection of its own (another control plane's), until `release()`. */
  async function holdTurn(url: string) {
    const state = await openControlState({ dataDir: '/nonexistent', databaseUrl: url });
    opened.push(state);
    const turn = await state.takeTurn('git-remote:acme', 5_000);
    return { release: () => turn.end() };
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
    // The first update holds the turn until the others have asked.
    let asked = () => {};
    const allAsked = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const first = a.turns.run(5_000, () =>
      a.queued(async () => {
        events.push('a a1');
        await allAsked;
        return committed('a1');
      }),
    );
    await until(
      async () => events.length,
      (n) => n === 1,
    );
    const rest = Array.from({ length: 11 }, (_, i) => a.update(`a${i + 2}`, events));
    // Asks while the first run holds the turn: gets it when that run ends, before the rest of the queue.
    const other = b.update('b1', events);
    await until(waitingForTheTurn(url), (n) => n === 1);
    asked();
    await Promise.all([first, ...rest, other]);
    expect(events.indexOf('b b1')).toBe(8);
    expect(b.caughtUp[0]).toHaveLength(8);
    expect(a.caughtUp).toEqual([['b:b1']]);
    expect(a.mostHeld).toBe(1);
  });

  it('takes the turn once for updates asking at once, holds one turn at a time, and ends it when none is left', async () => {
    const url = await cluster.createDatabase();
    const [a, b] = [await controlPlane(url, 'a'), await controlPlane(url, 'b')];
    const other = await holdTurn(url);
    const events: string[] = [];
    // All ask while another control plane holds the turn: one of them takes it, the others join it.
    const updates = ['a1', 'a2', 'a3'].map((commit) => a.update(commit, events));
    await until(waitingForTheTurn(url), (n) => n === 1);
    expect(events).toEqual([]);
    await other.release();
    await Promise.all(updates);
    expect(a.taken).toBe(1);
    expect(a.mostHeld).toBe(1);
    expect(events).toEqual(['a a1', 'a a2', 'a a3']);
    // None left: the turn ended, and the other control plane has it at once, with all three in its note.
    await b.update('b1', events, 1_000);
    expect(b.caughtUp).toEqual([['a:a1', 'a:a2', 'a:a3']]);
    expect(a.holding).toBe(0);
  });

  it('never keeps what is queued behind an update waiting for the turn', async () => {
    const url = await cluster.createDatabase();
    const a = await controlPlane(url, 'a');
    const other = await holdTurn(url);
    const events: string[] = [];
    const waiting = a.update('a1', events);
    // A kill takes no turn: it goes through the write queue alone, while the update still waits for its turn.
    await a.queued(async () => {
      events.push('a kill');
    });
    expect(events).toEqual(['a kill']);
    await other.release();
    await waiting;
    expect(events).toEqual(['a kill', 'a a1']);
  });

  it("gives up on the turn within each update's own wait, taking none it would not use", async () => {
    const url = await cluster.createDatabase();
    const a = await controlPlane(url, 'a');
    const other = await holdTurn(url);
    const events: string[] = [];
    const short = a.update('a1', events, 200);
    const long = a.update('a2', events, 10_000);
    // In the words the caller understands, whichever side gave up: not the name of a lock in the database.
    await expect(short).rejects.toThrow(/^another control plane held the turn to write to the git remote for over 200 ms; try again$/);
    await other.release();
    await expect(long).resolves.toMatchObject({ commit: 'a2' });
    expect(events).toEqual(['a a2']);
    expect(a.mostHeld).toBe(1);
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
