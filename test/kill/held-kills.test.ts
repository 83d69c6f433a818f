import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_ACTOR } from '../../src/features/guards/guard-stop.js';
import { HeldKills } from '../../src/features/kill/held-kills.js';
import { KillSwitch } from '../../src/features/kill/kill-switch.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { FileHeldKillStore } from '../../src/foundations/state/files/file-held-kill-store.js';
import type { HeldKill } from '../../src/foundations/state/index.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { until } from '../helpers/deadlines.js';
import { admin, SIGNING_KEY, seedShop, tempDir, track } from '../storage/helpers.js';

/** The commit another control plane made a kill with, while the git remote could not take it. */
const FIRST = '1'.repeat(40);

function record(id: string, fields: Partial<HeldKill> = {}): HeldKill {
  return {
    id,
    org: 'acme',
    project: 'shop',
    flag: 'a',
    environment: 'prod',
    action: 'kill',
    entry: { killedAt: '2026-05-01T10:00:00.000Z', killedBy: 'svc_adm_7hd82kqa', reason: 'payments failing' },
    actor: admin,
    summary: 'kill a in prod',
    heldAt: new Date().toISOString(),
    ...fields,
  };
}

describe('kills other control planes hold, made here from their records', () => {
  async function setUp() {
    const repo = track(await FlagRepository.open({ gitdir: join(tempDir(), 'org.git'), create: true, signingKey: SIGNING_KEY }));
    await seedShop(repo);
    const killSwitch = new KillSwitch({ applyKills: async () => {} });
    const store = new FileHeldKillStore(tempDir());
    const held = new HeldKills({ org: 'acme', store, repo: async () => repo, killSwitch, logger: silentLogger });
    const killed = async () => Object.keys((await repo.readServed((await repo.head())!)).killFiles.get('shop')!.prod.kills);
    const request = { org: 'acme', repo, projectSlug: 'shop', flagKey: 'a', environment: 'prod' as const, actor: admin };
    return { repo, killSwitch, store, held, killed, request };
  }

  it('a record of a kill main made already (from another record of it) is not made again after the clear that followed', async () => {
    const { repo, killSwitch, store, held, killed, request } = await setUp();
    // Main made the kill from one record of it, then the kill was cleared here.
    await killSwitch.kill({ ...request, entry: record(FIRST).entry!, madeFrom: FIRST });
    await killSwitch.clear(request);
    const head = await repo.head();
    // A third control plane's copy of the same kill is still recorded (it had not reached the remote yet).
    await store.add(record('2'.repeat(40), { madeFrom: FIRST }));
    await store.add(record(FIRST));

    await held.catchUp();

    expect(await repo.head()).toBe(head);
    expect(await killed()).toEqual([]);
  });

  it('main is read again for what it made since the last catching up, not only once', async () => {
    const { repo, killSwitch, store, held, killed, request } = await setUp();
    await held.catchUp();
    await store.add(record('3'.repeat(40), { flag: 'b' }));
    await held.catchUp();
    // Since then main made the kill from one record of it and cleared it; another record of it comes late.
    await killSwitch.kill({ ...request, entry: record(FIRST).entry!, madeFrom: FIRST });
    await killSwitch.clear(request);
    const head = await repo.head();
    await store.add(record('2'.repeat(40), { madeFrom: FIRST }));

    await held.catchUp();

    expect(await repo.head()).toBe(head);
    expect(await killed()).toEqual(['b']);
  });

  it('a kill main takes with its clear while the record of it waits for the write queue is not made again after the clear', async () => {
    const { repo, killSwitch, store, killed, request } = await setUp();
    // Something else has the write queue (as a pull of what another control plane pushed would): behind it, a copy
    // of the kill made from another record of it, then its clear.
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const blocker = repo.update(async () => {
      await gate;
      return { changes: [], meta: { action: 'change', summary: 'nothing', actor: admin }, result: null };
    });
    const copy = killSwitch.kill({ ...request, entry: record(FIRST).entry!, madeFrom: FIRST });
    const clear = killSwitch.clear(request);
    await store.add(record(FIRST));
    // This control plane reads the record while main lacks the kill, and queues its making behind them.
    let queued: () => void = () => {};
    const making = new Promise<void>((resolve) => {
      queued = resolve;
    });
    const watched = new Proxy(repo, {
      get(target, property) {
        if (property === 'update') queued();
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const held = new HeldKills({ org: 'acme', store, repo: async () => watched, killSwitch, logger: silentLogger });
    const caughtUp = held.catchUp();
    await making;
    release();
    await Promise.all([blocker, copy, clear, caughtUp]);

    expect(await killed()).toEqual([]);
    const actions = (await repo.firstParentLog({ from: await repo.head(), limit: 3 })).map((c) => c.flagops?.action);
    expect(actions).toEqual(['clear_kill', 'kill', 'project_create']);
  });

  it('a record of a kill main has not made is made, naming the commit that first made it, with its reason', async () => {
    const { repo, store, held, killed } = await setUp();
    await store.add(record(FIRST));

    await held.catchUp();

    expect(await killed()).toEqual(['a']);
    const made = await repo.readCommit((await repo.head())!);
    expect(made.flagops).toMatchObject({ action: 'kill', flag: 'a', madeFrom: FIRST });
    // The audit trail reads a kill's reason from its commit, as for every kill.
    expect(made.body).toContain('reason: payments failing');
  });

  it('a kill held here is answered without waiting for a database that does not answer; its record is added once it does', async () => {
    const { repo, killSwitch, store, request } = await setUp();
    const answering: Array<() => void> = [];
    // The database takes the statement and says nothing (it hangs) until told to answer.
    const hanging = Object.create(store) as FileHeldKillStore;
    hanging.add = (kill) => new Promise<void>((resolve) => answering.push(() => resolve(store.add(kill))));
    for (const databaseDown of [() => undefined, () => new Error('the listening connection is lost')]) {
      const held = new HeldKills({ org: 'acme', store: hanging, repo: async () => repo, killSwitch, logger: silentLogger, databaseDown });
      const kill = await killSwitch.kill({ ...request, reason: 'payments failing' });
      await held.held(kill.commit!);
      expect(answering).toHaveLength(1);
      expect((await store.list('acme')).map((r) => r.id)).not.toContain(kill.commit);
      answering.shift()!();
      await until(
        async () => (await store.list('acme')).map((r) => r.id),
        (ids) => ids.includes(kill.commit!),
      );
      await killSwitch.clear(request);
    }
  });

  it("a guard's kill held on one control plane is made on another as guard_failed, with the guard as actor and its reason", async () => {
    // The control plane whose guard killed the flag while the git remote could not take the kill.
    const first = await setUp();
    const reason = 'guard failed: error_rate = 0.5, above max 0.05';
    const kill = await first.killSwitch.kill({ ...first.request, actor: GUARD_ACTOR, reason, action: 'guard_failed' });
    await first.held.held(kill.commit!);
    // Another control plane, sharing the held kills' records.
    const other = await setUp();
    const held = new HeldKills({
      org: 'acme',
      store: first.store,
      repo: async () => other.repo,
      killSwitch: other.killSwitch,
      logger: silentLogger,
    });

    await held.catchUp();

    expect(await other.killed()).toEqual(['a']);
    const made = await other.repo.readCommit((await other.repo.head())!);
    expect(made.flagops).toMatchObject({
      action: 'guard_failed',
      flag: 'a',
      madeFrom: kill.commit,
      actor: { type: 'scheduler', name: 'guard' },
    });
    expect(made.body).toContain(`reason: ${reason}`);
  });
});
