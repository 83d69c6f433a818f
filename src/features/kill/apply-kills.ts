import { type KillsFile, setOwn } from '@flagops/core';

/** What an environment's kills file makes of the flags a view serves: the view's kill overlay. */
export interface KillOverlay {
  /** The kills of served flags, each entry as kills.yaml has it (killedAt, killedBy, reason). */
  readonly kills: KillsFile;
  /** The keys of the killed flags: what evaluation checks before anything else. */
  readonly killed: ReadonlySet<string>;
  readonly version: number;
  /** The snapshot's ETag at that version. */
  readonly etag: string;
  /** The commit the kills were read from. */
  readonly commit: string | null;
}

/**
 * Applies a kills file to the flags a view serves (pure, no I/O). It is how a kill changes what is served,
 * wherever it is served: the evaluation server on a kill and on a reload, and a replica on the feed's kill
 * event, so every server serves a kill the same. Only the overlay changes: the flags and their compiled form
 * stay as they are. A kill naming a flag the view does not serve is left out.
 */
export function applyKills(
  flags: Readonly<Record<string, unknown>>,
  kills: KillsFile,
  version: number,
  commit: string | null,
): KillOverlay {
  const keys = Object.keys(kills.kills);
  const killed = new Set(keys.filter((key) => Object.hasOwn(flags, key)));
  let served = kills;
  if (killed.size !== keys.length) {
    served = { kills: {} };
    for (const key of killed) setOwn(served.kills, key, kills.kills[key]);
  }
  return { kills: served, killed, version, etag: `"v${version}"`, commit };
}

/**
 * Whether `kills` makes of `flags` the overlay `served` already has: the same killed flags with the same entries,
 * in whatever order (the fast path appends a kill; the file, read again, lists kills by flag key).
 */
export function servesSameKills(served: KillsFile, flags: Readonly<Record<string, unknown>>, kills: KillsFile): boolean {
  let count = 0;
  for (const key of Object.keys(kills.kills)) {
    if (!Object.hasOwn(flags, key)) continue;
    count++;
    const entry = kills.kills[key];
    const had = Object.hasOwn(served.kills, key) ? served.kills[key] : undefined;
    if (had?.killedAt !== entry.killedAt || had.killedBy !== entry.killedBy || had.reason !== entry.reason) return false;
  }
  return count === Object.keys(served.kills).length;
}
