import type { Logger } from '../log/logger.js';

export interface MainMoved {
  from: string | null;
  to: string;
  /** `local`: committed by this instance; `external`: anyone else (a push, another process). */
  origin: 'local' | 'external';
}

/**
 * Announces each move of `main` once, in order: `from` is the previous announcement's `to`. Heads are
 * observed in the write queue's order (write-queue.ts), so our own commit is never announced as someone else's.
 */
export class MainMoves {
  /** The head announced last (at open: the head then). */
  last: string | null = null;
  private readonly listeners = new Set<(event: MainMoved) => void>();

  constructor(private readonly logger: Logger) {}

  /** Subscribes; returns the unsubscribe function. Listeners must not throw (it is logged). */
  listen(listener: (event: MainMoved) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  observe(head: string | null, origin: MainMoved['origin']): void {
    if (head === this.last) return;
    const from = this.last;
    this.last = head;
    if (head === null) return;
    for (const listener of this.listeners) {
      try {
        listener({ from, to: head, origin });
      } catch (err) {
        this.logger.error('a main-moved listener threw', { err });
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
