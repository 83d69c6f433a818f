import type { Scheduler } from './types.js';

/** The platform's timers, looked up when called so that a test or a page can replace them. */
export const realScheduler: Scheduler = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * A scheduler that forgets its pending timers on `clear()`: the client's close() cancels everything it ever
 * scheduled, whoever scheduled it, without each part having to remember its own handles.
 */
export class TrackedScheduler implements Scheduler {
  private readonly pending = new Set<unknown>();
  private cleared = false;

  constructor(private readonly inner: Scheduler) {}

  now(): number {
    return this.inner.now();
  }

  setTimeout(fn: () => void, ms: number): unknown {
    if (this.cleared) return undefined;
    const handle = this.inner.setTimeout(() => {
      this.pending.delete(handle);
      fn();
    }, ms);
    this.pending.add(handle);
    return handle;
  }

  clearTimeout(handle: unknown): void {
    if (handle === undefined || !this.pending.delete(handle)) return;
    this.inner.clearTimeout(handle);
  }

  /** Cancels every pending timer and refuses new ones. */
  clear(): void {
    this.cleared = true;
    for (const handle of this.pending) this.inner.clearTimeout(handle);
    this.pending.clear();
  }
}
