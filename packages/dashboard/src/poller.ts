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

/** A task kept fresh: `poke` runs it as soon as possible (a change was announced); `stop` ends it. */
export interface Refresher {
  stop(): void;
  poke(): void;
}

/**
 * Runs `task` now, again `intervalMs` after each run ends, and at once when poked (never two at once: a poke
 * during a run makes one more run right after it). Only while the page is visible: a hidden tab costs the
 * server nothing, and becoming visible again (after a poke or not) refreshes at once.
 */
export function startRefreshing(
  task: () => Promise<void>,
  intervalMs: number,
  visibility: Visibility,
  timers: Timers = realTimers,
): Refresher {
  let stopped = false;
  let running = false;
  let again = false;
  let handle: unknown;

  const schedule = () => {
    if (!stopped && !visibility.hidden) handle = timers.setTimeout(tick, intervalMs);
  };
  const tick = async () => {
    if (handle !== undefined) timers.clearTimeout(handle);
    handle = undefined;
    if (stopped || visibility.hidden) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await task();
    } catch {
      // A failed refresh is retried on the next tick; the page shows errors of its own actions, not of refreshes.
    } finally {
      running = false;
      if (again && !stopped) {
        again = false;
        void tick();
      } else schedule();
    }
  };
  const onVisibility = () => {
    if (!visibility.hidden && !stopped) void tick();
  };
  visibility.addEventListener('visibilitychange', onVisibility);
  void tick();
  return {
    poke: () => void tick(),
    stop: () => {
      stopped = true;
      if (handle !== undefined) timers.clearTimeout(handle);
      visibility.removeEventListener('visibilitychange', onVisibility);
    },
  };
}
