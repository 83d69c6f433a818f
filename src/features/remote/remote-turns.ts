import type { Turn } from '../../foundations/state/index.js';
import type { UpdateResult } from '../../foundations/storage/index.js';

/** Updates one turn may run back to back before the other control planes get theirs. */
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

/**
 * Writes through several control planes sharing one git remote, ordered before they reach it: each update runs
 * in its control plane's turn, after main was brought up to what the last holder pushed (carried by the turn's
 * note, usually with the commit's objects, so without a fetch), so no push is refused for a commit it could
 * have known of and no change is made twice. The updates of one control plane run one at a time already (its
 * write queue): the next one queued when one ends keeps the turn, up to UPDATES_PER_TURN, so a busy control
 * plane takes the turn (and catches up) once per run of updates, not per update.
 */
export class RemoteTurns {
  private held: { turn: Turn; updates: number; notices: string[] } | undefined;
  /** Set while the turn is kept for an update that may follow at once. */
  private release: ReturnType<typeof setImmediate> | undefined;

  constructor(private readonly deps: RemoteTurnsDeps) {}

  async run<T>(waitMs: number, work: () => Promise<UpdateResult<T>>): Promise<UpdateResult<T>> {
    if (this.release !== undefined) {
      clearImmediate(this.release);
      this.release = undefined;
    }
    if (this.held === undefined) {
      const turn = await this.deps.take(waitMs);
      this.held = { turn, updates: 0, notices: [] };
      try {
        const note: unknown = turn.note === null ? [] : JSON.parse(turn.note);
        if (Array.isArray(note) && note.length > 0) await this.deps.catchUp(note as TurnNote);
      } catch (err) {
        await this.end();
        throw err;
      }
    }
    const held = this.held;
    held.updates++;
    try {
      const result = await work();
      if (result.committed && result.commit !== null) {
        const notice = await this.deps.noticeOf(result.commit).catch(() => undefined);
        if (notice !== undefined) held.notices.push(notice);
      }
      return result;
    } finally {
      // The write queue starts the next update it holds as soon as this one has ended: by the next turn of the
      // event loop it has asked for the turn, or there is none.
      if (held.updates >= UPDATES_PER_TURN) await this.end();
      else this.release = setImmediate(() => void this.end());
    }
  }

  /** Ends the turn now (the service stops). */
  async close(): Promise<void> {
    if (this.release !== undefined) clearImmediate(this.release);
    this.release = undefined;
    await this.end();
  }

  private async end(): Promise<void> {
    const held = this.held;
    this.held = undefined;
    this.release = undefined;
    // No commit pushed in the turn: the last holder's note stays, which is still what the remote holds.
    await held?.turn.end(held.notices.length > 0 ? JSON.stringify(held.notices satisfies TurnNote) : undefined);
  }
}
