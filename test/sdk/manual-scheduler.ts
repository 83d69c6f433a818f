import type { Scheduler } from '@flagops/sdk';

/** A clock and timers that move only when told to: `advanceTo` runs every timer due by then, in time order. */
export class ManualScheduler implements Scheduler {
  private timers: Array<{ id: number; at: number; fn: () => void }> = [];
  private nextId = 1;

  constructor(private t: number) {}

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ id, at: this.t + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  }

  /** When each timer waiting to fire is due, earliest first. */
  pendingAt(): number[] {
    return this.timers.map((timer) => timer.at).sort((a, b) => a - b);
  }

  /** Moves the clock to `t`, firing due timers one by one and letting the code they start run in between. */
  async advanceTo(t: number): Promise<void> {
    for (;;) {
      const due = this.timers.filter((timer) => timer.at <= t).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.t = due.at;
      due.fn();
      await new Promise((r) => setTimeout(r, 0));
    }
    this.t = t;
  }
}
