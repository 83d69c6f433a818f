/** Runs a task when a slot is free; `running` and `waiting` say how busy it is. */
export interface Limiter {
  <T>(task: () => Promise<T>): Promise<T>;
  readonly running: number;
  readonly waiting: number;
}

/**
 * Runs at most `concurrency` tasks at once; the rest wait in order. Keeps file descriptors (or memory) bounded.
 * With `maxWaiting`, a task arriving when that many already wait is refused at once with `refuse()`.
 */
export function createLimiter(concurrency: number, options: { maxWaiting?: number; refuse?: () => Error } = {}): Limiter {
  const maxWaiting = options.maxWaiting ?? Number.POSITIVE_INFINITY;
  let active = 0;
  const waiting: Array<() => void> = [];
  const limit = async <T>(task: () => Promise<T>): Promise<T> => {
    while (active >= concurrency) {
      if (waiting.length >= maxWaiting) throw options.refuse?.() ?? new Error('too many tasks waiting');
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
  return Object.defineProperties(limit, {
    running: { get: () => active },
    waiting: { get: () => waiting.length },
  }) as Limiter;
}
