/** What the poller needs of `document`: whether the page is visible, and word when that changes. */
export interface Visibility {
  readonly hidden: boolean;
  addEventListener(type: 'visibilitychange', listener: () => void): void;
  removeEventListener(type: 'visibilitychange', listener: () => void): void;
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Runs `task` now and then `intervalMs` after each run ends (never two at once), only while the page is
 * visible: a hidden tab costs the server nothing, and becoming visible again refreshes at once. This is how a
 * kill made by someone else shows up within about a second. Returns the function that stops it.
 */
export function startPolling(
  task: () => Promise<void>,
  intervalMs: number,
  visibility: Visibility,
  timers: Timers = realTimers,
): () => void {
  let stopped = false;
  let running = false;
  let handle: unknown;

  const schedule = () => {
    if (!stopped && !visibility.hidden) handle = timers.setTimeout(tick, intervalMs);
  };
  const tick = async () => {
    handle = undefined;
    if (stopped || running || visibility.hidden) return;
    running = true;
    try {
      await task();
    } catch {
      // A failed poll is retried on the next tick; the page shows errors of its own actions, not of polls.
    } finally {
      running = false;
      schedule();
    }
  };
  const onVisibility = () => {
    if (visibility.hidden || stopped) return;
    if (handle !== undefined) timers.clearTimeout(handle);
    void tick();
  };
  visibility.addEventListener('visibilitychange', onVisibility);
  void tick();
  return () => {
    stopped = true;
    if (handle !== undefined) timers.clearTimeout(handle);
    visibility.removeEventListener('visibilitychange', onVisibility);
  };
}
