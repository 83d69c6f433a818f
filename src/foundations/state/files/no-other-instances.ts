import type { Notices } from '../notices.js';
import type { Unsubscribe } from '../unsubscribe.js';

/**
 * Notices where the state is files: one service owns a data directory, so there is no other instance to tell
 * and none to hear from; a publish has nobody to reach and resolves at once.
 */
export class NoOtherInstances implements Notices {
  async publish(_topic: string, _payload: string): Promise<void> {}

  subscribe(_topic: string, _listener: (payload: string) => void): Unsubscribe {
    return () => {};
  }

  onResync(_listener: () => void): Unsubscribe {
    return () => {};
  }
}
