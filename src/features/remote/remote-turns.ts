import { WriteConflictError } from '../../foundations/errors/kinds.js';
import type { Turn } from '../../foundations/state/index.js';
import type { MainWrite } from '../../foundations/storage/index.js';

/** Updates one turn may take in before the other control planes get theirs. */
const UPDATES_PER_TURN = 8;

/** The note a turn leaves: the notices of the commits it pushed, oldest first, for the next holder to take in order. */
export type TurnNote = string[];

export interface RemoteTurnsDeps {
  /** Takes the turn among the control planes sharing the remote (ControlState.takeTurn). */
  take(waitMs: number): Promise<Turn>;
  /** Brings main up to what the last holder pushed, given the notices of its note (oldest first). */
  catchUp(notices: readonly string[]): Promise<void>;
  /** The notice of a commit this control plane pushed, for the next holder. */
  noticeOf(commit: string): Promise<string | undefined>;
}

interface Held {
  turn: Turn;
  /** Updates taken into this turn so far. */
  updates: number;
  /** Updates of this turn not yet ended (running, or waiting in the store's write queue). */
  running: number;
  notices: string[];
  /** Settles once the turn has ended (a full one: what the next update waits for). */
  ended: Promise<void>;
  /** Settles `ended` with the turn's end. */
  ending(end: Promise<void>): void;
}

/**
 * Writes through several control planes sharing one git remote, ordered before they reach it: each update runs
 * in its control plane's turn, after main was brought up to what the last holder pushed (carried by the turn's
 * note, usually with the commit's objects, so without a fetch), so no push is refused for a commit it could
 * have known of and no change is made twice.
 *
 * The turn is taken before an update enters the store's write queue, so a kill (which takes no turn) is never
 * queued behind an update waiting for another control plane. Updates asking while the turn is held join it, up
 * to UPDATES_PER_TURN, and run one at a time in the write queue; the turn ends once none is left (kept to the
 * next turn of the event loop, for one that follows at once), so a busy control plane takes the turn (and
 * catches up) once per run of updates. One turn at a time: updates asking while it is being taken, or while a
 * full one finishes, wait for it, each within its own deadline.
 */
export class RemoteTurns {
  private held: Held | undefined;
  /** The turn being taken (and caught up), or the last one ending: nothing else is taken meanwhile. */
  private pending: Promise<unknown> = Promise.resolve();
  private busy = false;
  /** Set while a turn with no update left is kept for one that may follow at once. */
  private release: ReturnType<typeof setImmediate> | undefined;

  constructor(private readonly deps: RemoteTurnsDeps) {}

  async run<R extends MainWrite>(waitMs: number, work: () => Promise<R>): Promise<R> {
    const held = await this.join(Date.now() + waitMs, waitMs);
    try {
      const result = await work();
      if (result.committed && result.commit !== null) {
        const notice = await this.deps.noticeOf(result.commit).catch(() => undefined);
        if (notice !== undefined) held.notices.push(notice);
      }
      return result;
    } finally {
      held.running--;
      if (held.running === 0) {
        if (held.updates >= UPDATES_PER_TURN) void this.end(held);
        else this.release = setImmediate(() => void this.end(held));
      }
    }
  }

  /** Ends the turn now (the service stops). */
  async close(): Promise<void> {
    if (this.held !== undefined) await this.end(this.held);
    await this.pending.catch(() => undefined);
  }

  /** Takes a place in the turn held now, or in the next one, taken here when nobody is taking it. */
  private async join(deadline: number, waitMs: number): Promise<Held> {
    for (;;) {
      const held = this.held;
      if (held !== undefined && held.updates < UPDATES_PER_TURN) {
        this.keep();
        held.updates++;
        held.running++;
        return held;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw heldTooLong(waitMs);
      if (held === undefined && !this.busy) return this.take(left, waitMs);
      // A full turn is finishing, or one is being taken: look again once that is done.
      await waitAtMost(held !== undefined ? held.ended : this.pending, left);
    }
  }

  /**
   * Takes the turn (after the last one here has ended) and catches up; the taker is its first update. `waitedMs`:
   * the whole wait the caller was given, which a refusal names.
   */
  private take(waitMs: number, waitedMs = waitMs): Promise<Held> {
    this.busy = true;
    const taken = (async () => {
      const started = Date.now();
      await this.pending.catch(() => undefined);
      const turn = await this.deps.take(Math.max(1, waitMs - (Date.now() - started))).catch((err: unknown) => {
        // The database's word for it names a lock; the caller is told what it waited for, as when it waits here.
        if (err instanceof WriteConflictError) throw heldTooLong(waitedMs);
        throw err;
      });
      try {
        const note: unknown = turn.note === null ? [] : JSON.parse(turn.note);
        if (Array.isArray(note) && note.length > 0) await this.deps.catchUp(note as TurnNote);
      } catch (err) {
        await turn.end();
        throw err;
      }
      let ending: (end: Promise<void>) => void = () => {};
      const ended = new Promise<void>((resolve) => {
        ending = (end) => resolve(end);
      });
      const held: Held = { turn, updates: 1, running: 1, notices: [], ended, ending };
      this.held = held;
      return held;
    })().finally(() => {
      this.busy = false;
    });
    this.pending = taken;
    return taken;
  }

  /** A turn with no update left is about to end: one asking now keeps it. */
  private keep(): void {
    if (this.release !== undefined) clearImmediate(this.release);
    this.release = undefined;
  }

  private end(held: Held): Promise<void> {
    if (this.held !== held) return Promise.resolve();
    this.keep();
    this.held = undefined;
    // No commit pushed in the turn: the last holder's note stays, which is still what the remote holds.
    const ended = held.turn.end(held.notices.length > 0 ? JSON.stringify(held.notices satisfies TurnNote) : undefined);
    this.pending = ended;
    held.ending(ended);
    return ended;
  }
}

function heldTooLong(waitMs: number): WriteConflictError {
  return new WriteConflictError(`another control plane held the turn to write to the git remote for over ${waitMs} ms; try again`);
}

/** Waits for `promise` to settle, at most `ms`; never rejects. */
function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}
