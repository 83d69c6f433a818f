import { CompiledEnvironment, murmur3_32 } from '../evaluation/index.js';
import type { Snapshot, SnapshotFlag } from '../model/index.js';

/** Two independent 32-bit hashes: a missed change event would need both to collide. */
function fingerprint(entry: SnapshotFlag): string {
  const json = JSON.stringify(entry);
  return `${murmur3_32(json, 0x9747b28c)}:${murmur3_32(json, 0x5bd1e995)}`;
}

/**
 * The snapshot local mode evaluates: compiled once per version with the same core the server uses. Only a
 * fingerprint of each entry is kept besides the compiled flags, so memory is the compiled form plus a few
 * bytes a flag, and a change event can still name exactly the flags that changed.
 */
export class SnapshotStore {
  compiled: CompiledEnvironment | null = null;
  version: number | null = null;
  etag: string | null = null;
  private fingerprints = new Map<string, string>();

  /**
   * Compiles and swaps in `snapshot`; returns the keys added, changed or removed. A snapshot that does not
   * compile throws and leaves the last good one in place.
   */
  replace(snapshot: Snapshot, etag: string): string[] {
    const compiled = new CompiledEnvironment(snapshot.flags);
    const next = new Map<string, string>();
    const changed: string[] = [];
    for (const key of compiled.keys) {
      const print = fingerprint(snapshot.flags[key]);
      next.set(key, print);
      if (this.fingerprints.get(key) !== print) changed.push(key);
    }
    for (const key of this.fingerprints.keys()) if (!next.has(key)) changed.push(key);
    this.compiled = compiled;
    this.fingerprints = next;
    this.version = snapshot.version;
    this.etag = etag;
    return changed;
  }
}
