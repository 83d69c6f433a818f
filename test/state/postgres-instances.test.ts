import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KeyService } from '../../src/foundations/auth/key-service.js';
import { type ControlState, openControlState } from '../../src/foundations/state/index.js';
import { MIGRATIONS } from '../../src/foundations/state/postgres/migrations.js';
import { StateFileError } from '../../src/foundations/state-files/state-files.js';
import { until } from '../helpers/deadlines.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { bundleMain, startProcess } from '../service/service-process.js';
import { key } from './contract/key-store-contract.js';

/** What several control planes on one database must see of each other within (the most a change may take). */
const WITHIN_MS = 1_000;

describe.skipIf(POSTGRES_MISSING !== null)('control planes sharing one PostgreSQL database', () => {
  let cluster: PostgresCluster;
  const opened: ControlState[] = [];
  const open = async (databaseUrl: string) => {
    const state = await openControlState({ dataDir: '/nonexistent', databaseUrl });
    opened.push(state);
    return state;
  };
  beforeAll(async () => {
    cluster = await PostgresCluster.start();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((state) => state.close()));
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  async function sql<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<R>(text)).rows;
    } finally {
      await client.end();
    }
  }

  describe('the schema', () => {
    it('is migrated once when two control planes start at once', async () => {
      const url = await cluster.createDatabase();
      await Promise.all([open(url), open(url), open(url)]);
      const rows = await sql<{ version: number }>(url, 'SELECT version FROM flagops_schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    });

    it('is refused when a newer flagops migrated it, with what to do', async () => {
      const url = await cluster.createDatabase();
      await (await open(url)).keys.list();
      await sql(url, `INSERT INTO flagops_schema_migrations (version) VALUES (${MIGRATIONS.length + 1})`);
      await expect(openControlState({ dataDir: '/nonexistent', databaseUrl: url })).rejects.toThrow(
        `the database's flagops schema is at version ${MIGRATIONS.length + 1}, newer than this flagops knows (${MIGRATIONS.length})`,
      );
    });
  });

  describe("the keys' pepper", () => {
    it('changed or damaged in flagops_secrets is refused at start (its one line, exit 1), changing no key, as with files', async () => {
      const url = await cluster.createDatabase();
      const created = await (await KeyService.open({ state: await open(url) })).createKey('acme', { kind: 'admin' });
      const keysBefore = await sql(url, 'SELECT id, record FROM flagops_keys ORDER BY position');
      const [{ value: pepper }] = await sql<{ value: Buffer }>(url, "SELECT value FROM flagops_secrets WHERE name = 'pepper'");
      await sql(url, `UPDATE flagops_secrets SET value = '\\x${Buffer.alloc(32, 1).toString('hex')}' WHERE name = 'pepper'`);
      const refused = KeyService.open({ state: await open(url) });
      await expect(refused).rejects.toThrow(StateFileError);
      await expect(refused).rejects.toThrow(
        "the pepper in the database's flagops_secrets is not the one the keys in flagops_keys were hashed with",
      );
      await sql(url, "UPDATE flagops_secrets SET value = '\\x0102' WHERE name = 'pepper'");
      await expect(KeyService.open({ state: await open(url) })).rejects.toThrow(
        "the pepper in the database's flagops_secrets is damaged: expected 32 bytes, found 2",
      );
      expect(await sql(url, 'SELECT id, record FROM flagops_keys ORDER BY position')).toEqual(keysBefore);
      await sql(url, `UPDATE flagops_secrets SET value = '\\x${pepper.toString('hex')}' WHERE name = 'pepper'`);
      expect((await KeyService.open({ state: await open(url) })).authenticate(created.key)?.keyId).toBe(created.id);
    });
  });

  describe('changes', () => {
    it('reach the listeners of every other instance within a second: a key added, then revoked', async () => {
      const url = await cluster.createDatabase();
      const [first, second, third] = [await open(url), await open(url), await open(url)];
      const heard: string[] = [];
      first.keys.onChange(() => heard.push('first'));
      second.keys.onChange(() => heard.push('second'));
      third.keys.onChange(() => heard.push('third'));
      await first.keys.add(() => ({ keys: [key('k1')], result: undefined }));
      await until(
        async () => [...heard].sort(),
        (h) => h.join() === 'second,third',
        WITHIN_MS,
      );
      heard.length = 0;
      await third.keys.revoke('acme', 'k1', '2026-05-01T11:00:00.000Z');
      await until(
        async () => [...heard].sort(),
        (h) => h.join() === 'first,second',
        WITHIN_MS,
      );
      expect((await second.keys.list()).keys[0].revokedAt).toBe('2026-05-01T11:00:00.000Z');
    });
  });

  describe('notices', () => {
    it('reach the subscribers of every other instance on their topic, never the publisher itself', async () => {
      const url = await cluster.createDatabase();
      const [first, second] = [await open(url), await open(url)];
      const firstHeard: string[] = [];
      const secondHeard: string[] = [];
      first.notices.subscribe('main-moved', (payload) => firstHeard.push(payload));
      second.notices.subscribe('main-moved', (payload) => secondHeard.push(payload));
      second.notices.subscribe('kills-changed', (payload) => secondHeard.push(`kills ${payload}`));
      await first.notices.publish('main-moved', 'acme 1111');
      await first.notices.publish('kills-changed', 'acme');
      await until(
        async () => secondHeard,
        (h) => h.length === 2,
        WITHIN_MS,
      );
      expect(secondHeard).toEqual(['acme 1111', 'kills acme']);
      // Heard after the publisher's own would have been: the publisher hears the other's only.
      await second.notices.publish('main-moved', 'acme 2222');
      await until(
        async () => firstHeard,
        (h) => h.length > 0,
        WITHIN_MS,
      );
      expect(firstHeard).toEqual(['acme 2222']);
    });

    it('refuses a payload PostgreSQL cannot carry (8000 bytes)', async () => {
      const state = await open(await cluster.createDatabase());
      await expect(state.notices.publish('main-moved', 'x'.repeat(8_000))).rejects.toThrow(/PostgreSQL carries at most/);
    });
  });

  describe('turns', () => {
    it('are had by one instance at a time, each given the note the last left, and given up after the wait they are given', async () => {
      const url = await cluster.createDatabase();
      const [first, second] = [await open(url), await open(url)];
      const turn = await first.takeTurn('writes', 5_000);
      expect(turn.note).toBeNull();
      // The other waits for it, and gives up when told to wait less than it is held.
      await expect(second.takeTurn('writes', 200)).rejects.toMatchObject({ code: 'conflict' });
      const next = second.takeTurn('writes', 5_000);
      let granted = false;
      void next.then(() => {
        granted = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(granted).toBe(false);
      await turn.end('pushed c1');
      const secondTurn = await next;
      expect(secondTurn.note).toBe('pushed c1');
      // A turn ended without a note leaves the last one.
      await secondTurn.end();
      const third = await first.takeTurn('writes', 5_000);
      expect(third.note).toBe('pushed c1');
      await third.end();
    });

    it('held by an instance whose connection is gone, passes to the next', async () => {
      const url = await cluster.createDatabase();
      const [first, second] = [await open(url), await open(url)];
      const held = await first.takeTurn('writes', 5_000);
      const next = second.takeTurn('writes', 10_000);
      await sql(url, "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted");
      await expect(next).resolves.toMatchObject({ note: null });
      // The one whose connection was cut ends its turn without an error, and can take it again later.
      await held.end('lost');
      await (await next).end();
      const again = await first.takeTurn('writes', 5_000);
      expect(again.note).toBeNull();
      await again.end();
    });
  });

  describe('a turn whose holder stops answering with its connection open', () => {
    it('passes to the next within seconds, not when the longest hold ends', async () => {
      const url = await cluster.createDatabase();
      const second = await open(url);
      const bundle = await bundleMain({ source: 'test/state/turn-holder.ts' });
      const holder = startProcess(bundle.entry, {}, [url]);
      try {
        await new Promise<void>((resolve, reject) => {
          holder.child.stdout!.on('data', (chunk) => String(chunk).includes('held') && resolve());
          holder.exit.then((code) => reject(new Error(`the holder exited ${code}: ${holder.stderr.join('')}`)));
        });
        // A process stopped (or a machine swapping): the socket stays open, nothing is said on it.
        holder.child.kill('SIGSTOP');
        const asked = Date.now();
        const next = await second.takeTurn('writes', 20_000);
        // Taken once the database ended the silent holder's session (4 s), well before the 30 s a turn may last.
        expect(Date.now() - asked).toBeLessThan(15_000);
        await next.end();
      } finally {
        holder.child.kill('SIGKILL');
        await holder.exit;
        await bundle.remove();
      }
    }, 40_000);
  });

  describe('turns held too long', () => {
    it('are ended by the database, which lets the next holder in', async () => {
      const url = await cluster.createDatabase();
      const [first, second] = [await open(url), await open(url)];
      const stuck = await first.takeTurn('writes', 5_000, 300);
      const next = await second.takeTurn('writes', 10_000);
      expect(next.note).toBeNull();
      // The stuck holder finds out when it ends its turn, without an error, and its note is not left.
      await stuck.end('late');
      await next.end();
      const third = await first.takeTurn('writes', 5_000);
      expect(third.note).toBeNull();
      await third.end();
    });
  });

  describe('the database hanging', () => {
    it('answers a turn asked for 503 unavailable soon after its wait, and lets a held turn end within seconds', async () => {
      const url = await cluster.createDatabase();
      const state = await open(url);
      const held = await state.takeTurn('writes', 5_000);
      // A connection left idle in the pool, open to the server: what the next turn is taken on.
      await (await state.takeTurn('other', 5_000)).end();
      await cluster.hang();
      try {
        let asked = Date.now();
        await expect(state.takeTurn('other', 2_000)).rejects.toMatchObject({
          code: 'unavailable',
          message: expect.stringMatching(/^the database at .* cannot be reached: no answer within \d+ ms$/),
        });
        expect(Date.now() - asked).toBeLessThan(4_500);
        // The turn held when the database began to hang ends all the same, so the next is not held up.
        asked = Date.now();
        await held.end('pushed');
        expect(Date.now() - asked).toBeLessThan(3_000);
      } finally {
        await cluster.resume();
      }
      // Once it answers again, turns are taken as before.
      await (await state.takeTurn('writes', 10_000)).end();
      await (await state.takeTurn('other', 10_000)).end();
    }, 40_000);

    it('is noticed by every instance within about a second, as a database that is down, and each listens again once it answers', async () => {
      const url = await cluster.createDatabase();
      const [first, second] = [await open(url), await open(url)];
      let resyncs = 0;
      second.notices.onResync(() => resyncs++);
      await cluster.hang();
      let noticedMs: number;
      try {
        const hungAt = Date.now();
        // Writes are refused, and /healthz says the database is unreachable, from what this says.
        const refused = await Promise.all(
          [first, second].map((state) =>
            until(
              async () => state.writesRefused(),
              (err) => err !== undefined,
            ),
          ),
        );
        noticedMs = Date.now() - hungAt;
        for (const err of refused)
          expect(err).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/cannot be reached: no answer within \d+ ms$/) });
      } finally {
        await cluster.resume();
      }
      expect(noticedMs).toBeLessThan(2_500);
      await until(
        async () => [first.writesRefused(), second.writesRefused()],
        (refusals) => refusals.every((err) => err === undefined),
      );
      // The listening connection came back, said that announcements may have been missed, and hears them again.
      expect(resyncs).toBeGreaterThan(0);
      const heard = new Promise<void>((resolve) => second.keys.onChange(resolve));
      await first.keys.add(() => ({ keys: [key('k1')], result: undefined }));
      await heard;
    }, 40_000);
  });

  describe('the database down', () => {
    it('makes store calls answer unavailable, and they work again once it is back, without reopening', async () => {
      const url = await cluster.createDatabase();
      const [first, second] = [await open(url), await open(url)];
      let resyncs = 0;
      second.notices.onResync(() => resyncs++);
      await cluster.stopServer();
      try {
        const refused = first.keys.add(() => ({ keys: [key('k1')], result: undefined }));
        await expect(refused).rejects.toMatchObject({
          code: 'unavailable',
          message: expect.stringMatching(/^the database at 127\.0\.0\.1:\d+\/\w+ cannot be reached: /),
        });
        await expect(first.users.list()).rejects.toMatchObject({ code: 'unavailable' });
      } finally {
        await cluster.startServer();
      }
      await until(
        () => first.keys.add(() => ({ keys: [key('k2')], result: 'added' })).catch((err: Error) => err.message),
        (outcome) => outcome === 'added',
      );
      expect((await second.keys.list()).keys.map((k) => k.id)).toEqual(['k2']);
      // The listening connection came back, and said that announcements may have been missed.
      await until(
        async () => resyncs,
        (n) => n > 0,
      );
      const heard = new Promise<void>((resolve) => second.keys.onChange(resolve));
      await first.keys.revoke('acme', 'k2', '2026-05-01T11:00:00.000Z');
      await heard;
    });
  });
});
