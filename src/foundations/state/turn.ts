/**
 * A turn alone among the instances sharing the state (ControlState.takeTurn): the note the last holder left, and
 * the end of the turn, which leaves a note for the next holder (none: the last one stays).
 */
export interface Turn {
  readonly note: string | null;
  /** Lets the next holder in; never rejects (a note that cannot be stored is lost, the turn ends anyway). */
  end(note?: string): Promise<void>;
}
