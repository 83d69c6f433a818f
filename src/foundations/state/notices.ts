import type { Unsubscribe } from './unsubscribe.js';

/**
 * Word passed between the instances sharing the state ("main moved", "pending kills changed"): a hint to read
 * something again, never the thing itself, since a notice can be missed (onResync says when).
 */
export interface Notices {
  /** Tells every other instance sharing the state; resolves once sent (or at once where there are none). */
  publish(topic: string, payload: string): Promise<void>;
  /** Calls `listener` with what another instance published on `topic` (never this instance's own). */
  subscribe(topic: string, listener: (payload: string) => void): Unsubscribe;
  /** Calls `listener` when notices may have been missed (the listening connection came back): read again. */
  onResync(listener: () => void): Unsubscribe;
}
