import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startRefreshing, type Visibility } from '../../../packages/dashboard/src/poller.js';

function fakeDocument() {
  const listeners = new Set<() => void>();
  const doc = {
    hidden: false,
    addEventListener: (_: string, fn: () => void) => listeners.add(fn),
    removeEventListener: (_: string, fn: () => void) => listeners.delete(fn),
  };
  return {
    doc: doc as Visibility & { hidden: boolean },
    set(hidden: boolean) {
      doc.hidden = hidden;
      for (const fn of listeners) fn();
    },
    listeners,
  };
}

describe('polling while the page is visible', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs at once, then every interval after each run ends', async () => {
    const { doc } = fakeDocument();
    const task = vi.fn(async () => undefined);
    const { stop } = startRefreshing(task, 1000, doc);
    expect(task).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(task).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(task).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(3000);
    expect(task).toHaveBeenCalledTimes(5);
    stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(task).toHaveBeenCalledTimes(5);
  });

  it('never runs two at once: a slow task delays the next run', async () => {
    const { doc } = fakeDocument();
    let running = 0;
    let overlap = false;
    const task = vi.fn(async () => {
      running++;
      overlap ||= running > 1;
      await new Promise((r) => setTimeout(r, 2500));
      running--;
    });
    startRefreshing(task, 1000, doc);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(overlap).toBe(false);
    expect(task).toHaveBeenCalledTimes(3); // 0, 3.5 s, 7 s
  });

  it('pauses while hidden and refreshes at once when visible again', async () => {
    const page = fakeDocument();
    const task = vi.fn(async () => undefined);
    startRefreshing(task, 1000, page.doc);
    page.set(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(task).toHaveBeenCalledTimes(1);
    page.set(false);
    expect(task).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1000);
    expect(task).toHaveBeenCalledTimes(3);
  });

  it('keeps polling after a failed run, and stops listening when stopped', async () => {
    const page = fakeDocument();
    const task = vi.fn(async () => {
      throw new Error('offline');
    });
    const { stop } = startRefreshing(task, 1000, page.doc);
    await vi.advanceTimersByTimeAsync(2000);
    expect(task).toHaveBeenCalledTimes(3);
    stop();
    expect(page.listeners.size).toBe(0);
  });
});

describe('refreshing when a change is announced', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs at once when poked, instead of waiting for the interval', async () => {
    const { doc } = fakeDocument();
    const task = vi.fn(async () => undefined);
    const refresher = startRefreshing(task, 60_000, doc);
    await vi.advanceTimersByTimeAsync(10);
    expect(task).toHaveBeenCalledTimes(1);
    refresher.poke();
    await vi.advanceTimersByTimeAsync(0);
    expect(task).toHaveBeenCalledTimes(2);
    // the interval starts again after the poked run
    await vi.advanceTimersByTimeAsync(59_999);
    expect(task).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(task).toHaveBeenCalledTimes(3);
    refresher.stop();
  });

  it('a poke during a run makes exactly one more run after it, never two at once', async () => {
    const { doc } = fakeDocument();
    let running = 0;
    let overlap = false;
    const task = vi.fn(async () => {
      running++;
      overlap ||= running > 1;
      await new Promise((r) => setTimeout(r, 100));
      running--;
    });
    const refresher = startRefreshing(task, 60_000, doc);
    refresher.poke();
    refresher.poke();
    refresher.poke();
    await vi.advanceTimersByTimeAsync(1000);
    expect(overlap).toBe(false);
    expect(task).toHaveBeenCalledTimes(2);
    refresher.stop();
  });

  it('does not run while hidden; a poke then waits for the page to be visible', async () => {
    const page = fakeDocument();
    const task = vi.fn(async () => undefined);
    const refresher = startRefreshing(task, 60_000, page.doc);
    await vi.advanceTimersByTimeAsync(10);
    page.set(true);
    refresher.poke();
    await vi.advanceTimersByTimeAsync(10);
    expect(task).toHaveBeenCalledTimes(1);
    page.set(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(task).toHaveBeenCalledTimes(2);
    refresher.stop();
  });
});
