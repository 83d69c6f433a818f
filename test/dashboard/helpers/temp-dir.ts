import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

/**
 * A fresh data directory per test, removed afterwards. `beforeRemove` runs first: it closes what the test
 * opened, so a write the test did not wait for cannot land in a directory being removed.
 */
export function useDataDir(beforeRemove?: () => Promise<void>): () => Promise<string> {
  const dirs: string[] = [];
  afterEach(async () => {
    await beforeRemove?.();
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });
  return async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-dash-'));
    dirs.push(dir);
    return dir;
  };
}

/** A clock the test moves by hand. */
export function manualClock(start = '2026-11-21T10:00:00.000Z') {
  let now = Date.parse(start);
  return {
    now: () => new Date(now),
    advance(ms: number) {
      now += ms;
    },
  };
}

/** scrypt at its smallest cost: the tests check behaviour, not the cost, and run many hashes. */
export const CHEAP_COST = { N: 1024, r: 8, p: 1 };
