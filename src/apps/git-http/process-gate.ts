/**
 * A cap on the git processes that git over HTTP runs at once. A clone of a big repository keeps a process
 * (and its pack-objects child) busy for seconds; without a cap, a few dozen at once would starve the
 * evaluation server of CPU and memory. Up to `max` run; up to `queue` more wait in order for one to finish;
 * beyond that a request is turned away at once (503 with Retry-After), as a busy git host does.
 */
export class ProcessGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly max: number,
    readonly queue: number,
  ) {
    if (!Number.isInteger(max) || max < 1) throw new Error('a process gate needs max of at least 1');
  }

  /**
   * A turn: resolves with its release function once a process may start, or null at once when the queue
   * is full. `abandoned` fires when the caller stops waiting (the client went away); its place is given up.
   */
  enter(abandoned?: (giveUp: () => void) => void): Promise<(() => void) | null> {
    if (this.running < this.max) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    if (this.waiting.length >= this.queue) return Promise.resolve(null);
    return new Promise((resolve) => {
      const start = () => {
        this.running++;
        resolve(this.releaser());
      };
      this.waiting.push(start);
      abandoned?.(() => {
        const at = this.waiting.indexOf(start);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        resolve(null);
      });
    });
  }

  /** Processes running and requests waiting now (for metrics and tests). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.waiting.shift()?.();
    };
  }
}
