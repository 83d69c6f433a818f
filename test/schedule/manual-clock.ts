import type { Clock, ClockTimer } from '../../src/features/schedule/clock.js';

interface Pending {
  at: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock tests move by hand: timers fire when `advance` passes their time, never on their own. */
export class ManualClock implements Clock {
  private readonly timers: Pending[] = [];

  constructor(private time: number) {}

  now(): Date {
    return new Date(this.time);
  }

  setTimer(fn: () => void, ms: number): ClockTimer {
    const timer = { at: this.time + Math.max(0, ms), fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  }

  /** Moves time forward and fires the timers due by then, in time order. */
  advance(ms: number): void {
    this.time += ms;
    for (;;) {
      const due = this.timers.filter((t) => !t.cancelled && t.at <= this.time).sort((a, b) => a.at - b.at)[0];
      if (!due) return;
      due.cancelled = true;
      due.fn();
    }
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
