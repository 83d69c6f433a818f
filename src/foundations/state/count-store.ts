import type { Unsubscribe } from './unsubscribe.js';

/** One (hour, scope, flag, variation) count. */
export interface CountEntry {
  /** Epoch ms of the start of a UTC hour. */
  hour: number;
  /** One project environment of one organisation: `<org>/<projectId>/<environment>`. */
  scope: string;
  flagKey: string;
  variation: string;
  count: number;
}

/** Evaluation counts per hour, scope, flag and variation, kept for the retention period. */
export interface CountStore {
  /**
   * Hands every stored count of the hours from `oldestHour` on to `onEntry`; several entries of one hour,
   * scope, flag and variation add up. Called once before anything is added, and again (never while an add is
   * under way) when onChange announces counts added by another instance.
   */
  read(oldestHour: number, onEntry: (entry: CountEntry) => void): Promise<void>;
  /** Adds the counts durably, all or none: after a failure nothing was added, so adding them again cannot count twice. */
  add(entries: Iterable<CountEntry>): Promise<void>;
  /**
   * Lets the store drop the hours before `oldestHour`. `current()` gives every count kept from then on,
   * aggregated (the caller holds them), for a store that rewrites itself from them; whether and when it does is
   * the store's choice.
   */
  tidy(oldestHour: number, current: () => Iterable<CountEntry>): Promise<void>;
  /** Calls `listener` when another instance sharing the state added counts; see Unsubscribe. */
  onChange(listener: () => void): Unsubscribe;
  /** Ends the store's use by this instance; nothing is added after. */
  close(): Promise<void>;
}
