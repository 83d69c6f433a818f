/**
 * Time as the scheduler sees it: what time it is, and a timer. Injected, so that tests move time forward
 * instead of sleeping until a step falls due.
 */
export interface Clock {
  now(): Date;
  /** Calls `fn` once after `ms` milliseconds; the handle cancels it. */
  setTimer(fn: () => void, ms: number): ClockTimer;
}

export interface ClockTimer {
  cancel(): void;
}

/** The longest single wait: a step days away is looked at again hourly (setTimeout's own limit is ~24.8 days). */
export const MAX_TIMER_MS = 60 * 60 * 1000;

/** The wall clock and Node's timers. Timers do not keep the process alive. */
export const systemClock: Clock = {
  now: () => new Date(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};
