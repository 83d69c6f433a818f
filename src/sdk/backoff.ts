/**
 * How long to wait before retry number `attempt` (1 = the first retry): doubling from `initialMs` up to
 * `maxMs`, then "equal jitter" (half fixed, half random) so that many clients cut off by the same outage do not
 * come back in lockstep, while none retries much sooner than planned.
 */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number, random: () => number): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const ceiling = Math.min(maxMs, initialMs * 2 ** exponent);
  return ceiling / 2 + random() * (ceiling / 2);
}
