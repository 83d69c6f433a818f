import type { Actor, EnvironmentName, KillEntry } from '@flagops/core';
import type { Unsubscribe } from './unsubscribe.js';

/**
 * A kill or cleared kill a control plane committed and served while the git remote could not take it: kept
 * here until main, with it, is on the remote, so that every other control plane serves it too (and can push
 * it, should the one that made it never come back).
 */
export interface HeldKill {
  /** The commit that made it, where it was made. */
  id: string;
  org: string;
  project: string;
  flag: string;
  environment: EnvironmentName;
  /** The kill commit's audit action, kept when it is made again: `guard_failed` for a guard's kill. */
  action: 'kill' | 'clear_kill' | 'guard_failed';
  /** The kill's entry as first made; null for a cleared kill. */
  entry: KillEntry | null;
  actor: Actor;
  summary: string;
  body?: string;
  heldAt: string;
  /** When this is another control plane's held kill made again here: that one's id. */
  madeFrom?: string;
}

/** Kills held back from the git remote, per organisation, oldest first. */
export interface HeldKillStore {
  /** `org`'s held kills, oldest first, but those whose id is in `except` (the ones the caller has seen). */
  list(org: string, except?: ReadonlySet<string>): Promise<HeldKill[]>;
  /**
   * Adds a held kill once that is durable; one with its id already is kept as it is. A kill made again from
   * another one's record (`madeFrom`) may go unannounced: no other instance has anything to make from it.
   */
  add(kill: HeldKill): Promise<void>;
  /** Removes these ids of `org` (on the remote now); ids not stored are ignored. */
  remove(org: string, ids: readonly string[]): Promise<void>;
  /** Calls `listener` when held kills may have changed elsewhere; see Unsubscribe. */
  onChange(listener: () => void): Unsubscribe;
}
