/**
 * How long a test waits for something that should happen at once (a reload, a pushed kill, a stream event)
 * before it fails. Generous on purpose: tests prove that it happens without a restart or a poll interval;
 * how fast it happens is measured by `npm run bench` (docs/performance.md), where a busy CI machine cannot
 * turn a timing into a flaky failure.
 */
export const PROMPTLY_MS = 10_000;

/** Reads until `check` holds, polling every 20 ms; throws with the last value read after PROMPTLY_MS. */
export async function until<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = PROMPTLY_MS): Promise<T> {
  const started = Date.now();
  let last: T;
  do {
    last = await read();
    if (check(last)) return last;
    await new Promise((r) => setTimeout(r, 20));
  } while (Date.now() - started < ms);
  throw new Error(`not within ${ms} ms; last: ${JSON.stringify(last)}`);
}
