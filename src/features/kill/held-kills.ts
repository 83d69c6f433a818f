import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../foundations/log/logger.js';
import type { HeldKill, HeldKillStore } from '../../foundations/state/index.js';
import type { FlagRepository } from '../../foundations/storage/index.js';
import { committedKill, killsMade } from './kill-rebase.js';
import type { KillSwitch } from './kill-switch.js';

/** How much earlier than a record's time the commit it names may say it was made (clocks of control planes differ). */
const CLOCK_SKEW_SECONDS = 300;
/** How many kills main made are kept before the older ones go. */
const MAX_MADE_KEPT = 10_000;
/** How often catchUpFirst looks whether the database is slow to list. */
const FIRST_POLL_MS = 20;
/** How long a kill's answer waits at most for its record to be added (the adding goes on). */
const RECORD_WAIT_MS = 500;

/** How far back (seconds) main is read for a record's kill made already: the record's time, less clock skew. */
function readBackTo(record: HeldKill): number {
  return Date.parse(record.heldAt) / 1000 - CLOCK_SKEW_SECONDS;
}

export interface HeldKillsDeps {
  /** The organisation whose repository follows the git remote. */
  org: string;
  store: HeldKillStore;
  repo: () => Promise<FlagRepository>;
  killSwitch: KillSwitch;
  logger: Logger;
  /** Told while kills are made from other control planes' records (true, then false): they tried the git host. */
  remakingHeld?: (remaking: boolean) => void;
  /** Why the database is known to be out of reach now (its listening connection lost); undefined while it answers. */
  databaseDown?: () => unknown;
}

/**
 * Remote mode with several control planes: a kill one of them committed while the git remote could not take
 * it is recorded in the shared state, and every other control plane makes and serves the same kill (the same
 * entry) at once, so a kill needs neither the git host nor the control plane that took it. Whichever control
 * plane reaches the remote first pushes it; the others' copies make no commit when rebased on it
 * (kill-rebase.ts), so it is in the audit trail once. A record is removed once main, holding it, is on the remote.
 */
export class HeldKills {
  /** Records (by id) this control plane's main holds: made here, or made again here from the record. */
  private readonly onMain = new Set<string>();
  private catchingUp: Promise<void> = Promise.resolve();
  /** This control plane's records being added, in the order they were made (a kill's copy, then its clear). */
  private recording: Promise<void> = Promise.resolve();
  /**
   * The kills main's commits made (their first commits, with the time they were made here), read from main as
   * far as `scannedHead`: each catching up reads only main's commits since.
   */
  private readonly madeOnMain = new Map<string, number>();
  private scannedHead: string | null = null;
  /** How far back (seconds) main was read up to scannedHead. */
  private scannedBack = Number.POSITIVE_INFINITY;
  /** When the listing of records under way was asked of the database; null when none is. */
  private listingSince: number | null = null;

  constructor(private readonly deps: HeldKillsDeps) {}

  /**
   * RemoteSync: main holds `commit`, a kill the remote did not take. Recorded before the kill is answered; a
   * copy of another control plane's kill, made here, is served without waiting for its record. A database known
   * to be out of reach is not waited for, and one that hangs holds the answer no longer than RECORD_WAIT_MS: the
   * kill is committed and served here already, and a database that does not answer makes it no safer.
   */
  async held(commit: string): Promise<void> {
    const { org, store, logger } = this.deps;
    const kill = await committedKill(await this.deps.repo(), commit);
    if (!kill) return;
    this.onMain.add(commit);
    const { meta, entry } = kill;
    const record: HeldKill = {
      id: commit,
      org,
      project: meta.project,
      flag: meta.flag,
      environment: meta.environment,
      action: meta.action === 'clear_kill' || meta.action === 'guard_failed' ? meta.action : 'kill',
      entry,
      actor: meta.actor,
      summary: meta.summary,
      ...(meta.body ? { body: meta.body } : {}),
      heldAt: new Date().toISOString(),
      // Made again here from another control plane's record: its commit names the one that first made it.
      ...(meta.madeFrom ? { madeFrom: meta.madeFrom } : {}),
    };
    // The kill is on disk here whatever happens; the shared record is what lets the others serve it.
    this.recording = this.recording.then(() =>
      store.add(record).catch((err: Error) => logger.warn('held kill not recorded in the shared state', { commit, err: err.message })),
    );
    // A copy is served without waiting for its record: the kill is durable in the record it was made from
    // already. Records are added in order, so a later kill's or clear's record, waited for, follows the copy's.
    if (record.madeFrom || this.deps.databaseDown?.() !== undefined) return;
    await Promise.race([this.recording, sleep(RECORD_WAIT_MS)]);
  }

  /** Makes every kill another control plane holds, in order (at start, when the records change, after a missed notice). */
  catchUp(): Promise<void> {
    const caughtUp = this.catchingUp.then(() =>
      this.makeRecorded().catch((err: Error) => this.deps.logger.warn('held kills of other control planes not read', { err: err.message })),
    );
    // Then main's newest commits are read ahead, off the caller's way (a kill asks first), so that the first record
    // after the git host fails is made without first reading minutes of main (up to ~200 commits in a busy org).
    this.catchingUp = caughtUp.then(() => this.readAhead());
    return caughtUp;
  }

  /** Reads what main made in the last CLOCK_SKEW_SECONDS, as a new record would ask; read since the last time after the first. */
  private async readAhead(): Promise<void> {
    try {
      const repo = await this.deps.repo();
      await this.killsMadeOnMain(repo, Date.now() / 1000 - CLOCK_SKEW_SECONDS, await repo.head());
    } catch {
      // Read when a record needs it, as before.
    }
  }

  /**
   * catchUp() for a kill or clear about to be made here, so that none answered elsewhere before it comes after it:
   * waited for while this control plane makes the kills it listed (its own work, milliseconds each, however many
   * piled up), but not past `databaseWaitMs` of waiting for the database to answer a listing, nor `mostMs` in all:
   * a database that hangs does not hold a kill up.
   */
  async catchUpFirst(databaseWaitMs: number, mostMs: number): Promise<void> {
    let caughtUp = false;
    const done = this.catchUp().then(() => {
      caughtUp = true;
    });
    const until = Date.now() + mostMs;
    while (!caughtUp && Date.now() < until) {
      if (this.listingSince !== null && Date.now() - this.listingSince > databaseWaitMs) return;
      await Promise.race([done, sleep(Math.min(FIRST_POLL_MS, until - Date.now()))]);
    }
  }

  /** Whether main here holds kills recorded as held and not yet known to be on the remote. */
  get holding(): boolean {
    return this.onMain.size > 0;
  }

  /** RemoteSync: main is on the remote, so every kill it holds is there: their records can go. */
  async released(): Promise<void> {
    if (this.onMain.size === 0) return;
    // A record still being added would outlive its removal: another control plane would make it again later.
    await this.recording;
    const ids = [...this.onMain];
    try {
      await this.deps.store.remove(this.deps.org, ids);
      for (const id of ids) this.onMain.delete(id);
    } catch (err) {
      this.deps.logger.warn('held kills not removed from the shared state; tried again at the next push', { err: (err as Error).message });
    }
  }

  private async makeRecorded(): Promise<void> {
    const { org, store } = this.deps;
    const repo = await this.deps.repo();
    // Every record listed before is in onMain by now (held on main here, or made here): only new ones are read.
    this.listingSince = Date.now();
    let records: HeldKill[];
    try {
      records = await store.list(org, this.onMain);
    } finally {
      this.listingSince = null;
    }
    // What main has made already, also before a restart: a record whose commit is on main, or whose kill main
    // made again from another record or took from the remote. Making those again would repeat them after what
    // came later (a kill after its clear).
    const unseen = records.filter((record) => !this.onMain.has(record.id));
    if (unseen.length > 0) {
      const made = await this.killsMadeOnMain(repo, Math.min(...unseen.map(readBackTo)), await repo.head());
      for (const record of unseen) {
        const first = record.madeFrom ?? record.id;
        if (!this.onMain.has(first) && !made.has(record.id) && !made.has(first)) continue;
        this.onMain.add(record.id);
        this.onMain.add(first);
      }
    }
    const toMake = records.filter((record) => !this.onMain.has(record.id));
    if (toMake.length === 0) return;
    this.deps.remakingHeld?.(true);
    try {
      await this.make(repo, toMake);
    } finally {
      this.deps.remakingHeld?.(false);
    }
  }

  /** The kills main at `head` has made since `notBefore` (seconds): read from its commits since the last time, then kept. */
  private async killsMadeOnMain(repo: FlagRepository, notBefore: number, head: string | null): Promise<ReadonlyMap<string, number>> {
    // Asked further back than read so far (an older record): main is read again from its head.
    const since = notBefore < this.scannedBack ? null : this.scannedHead;
    // A main rebuilt since (held kills rebased) does not reach scannedHead: it is read back to notBefore then.
    for (const [id, at] of await killsMade(repo, { from: head, until: since, notBefore })) this.madeOnMain.set(id, at);
    this.scannedHead = head;
    this.scannedBack = Math.min(this.scannedBack, notBefore);
    // Kept small: what is older than asked now goes, and main is read back that far only again.
    if (this.madeOnMain.size > MAX_MADE_KEPT) {
      for (const [id, at] of this.madeOnMain) if (at < notBefore) this.madeOnMain.delete(id);
      this.scannedBack = notBefore;
    }
    return this.madeOnMain;
  }

  /** Makes each kill of `records` here, in order, as it was made (the same entry). */
  private async make(repo: FlagRepository, records: readonly HeldKill[]): Promise<void> {
    const { org, killSwitch, logger } = this.deps;
    for (const kill of records) {
      // The commit that first made it, whichever record this is (copies name it too): made once here.
      const first = kill.madeFrom ?? kill.id;
      const made = this.onMain.has(first);
      this.onMain.add(kill.id);
      this.onMain.add(first);
      if (made) continue;
      const request = {
        org,
        repo,
        projectSlug: kill.project,
        flagKey: kill.flag,
        environment: kill.environment,
        actor: kill.actor,
        madeFrom: first,
        // Main may take it meanwhile, while the kill waits for the write queue (a pull of what another control
        // plane pushed): asked again on the head it would be made on.
        madeOnMain: async (head: string | null) => (await this.killsMadeOnMain(repo, readBackTo(kill), head)).has(first),
      };
      try {
        // Made again with the action it was made with: a guard's kill stays guard_failed in the audit trail.
        const outcome =
          kill.action === 'clear_kill'
            ? await killSwitch.clear(request)
            : await killSwitch.kill({ ...request, entry: kill.entry ?? undefined, action: kill.action });
        logger.info('served a kill another control plane held', {
          id: kill.id,
          flag: kill.flag,
          environment: kill.environment,
          changed: outcome.changed,
        });
      } catch (err) {
        // A flag deleted meanwhile (404), or the repository failing: the record stays for the others.
        logger.warn('a kill another control plane held could not be made here', { id: kill.id, err: (err as Error).message });
      }
    }
  }
}
