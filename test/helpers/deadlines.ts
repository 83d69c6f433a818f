/**
 * How long a test waits for something that should happen at once (a reload, a pushed kill, a stream event)
 * before it fails. Generous on purpose: tests prove that it happens without a restart or a poll interval;
 * how fast it happens is measured by `npm run bench` (docs/performance.md), where a busy CI machine cannot
 * turn a timing into a flaky failure.
 */
export const PROMPTLY_MS = 10_000;
