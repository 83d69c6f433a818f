export interface ThrottleOptions {
  now?: () => number;
  /** Failures allowed before any wait (default 3). */
  freeFailures?: number;
  /** The first wait; each further failure doubles it (default 1 s). */
  baseDelayMs?: number;
  /** The longest wait (default 30 s). */
  maxDelayMs?: number;
  /** A key's failures are forgotten after this long without another (default 15 min). */
  forgetAfterMs?: number;
  /** Besides, one failure is forgotten every `decayMs` (default: never), so a slow trickle never adds up. */
  decayMs?: number;
  /** Keys remembered at most; beyond, the one with the oldest failure is forgotten, so memory stays bounded. */
  maxEntries?: number;
  /** Whether a success forgets the key's failures (default true). */
  resetOnSuccess?: boolean;
}

interface Entry {
  failures: number;
  /** When `failures` was last decayed. */
  decayedAt: number;
  /** Attempts begun and not yet settled. */
  pending: number;
  lastFailureAt: number;
  blockedUntil: number;
}

/** What begin() answers: go ahead (the attempt is then reserved), or wait this long. */
export type Admission = { admitted: true } | { admitted: false; retryAfterMs: number };

const ADMITTED: Admission = Object.freeze({ admitted: true });

/**
 * Slows down guessing, per key (an address, or an address and a username). After `freeFailures` failures each
 * further attempt must wait, 1 s, 2 s, 4 s… up to `maxDelayMs`. An attempt is reserved before the credential is
 * checked and settled after: attempts in flight count against the free failures, so a burst of concurrent
 * attempts cannot all slip through while the first checks are still running. Once the free failures are used
 * up, one attempt at a time.
 */
export class AttemptThrottle {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly freeFailures: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly forgetAfterMs: number;
  private readonly decayMs: number;
  private readonly maxEntries: number;
  private readonly resetOnSuccess: boolean;

  constructor(options: ThrottleOptions = {}) {
    this.now = options.now ?? Date.now;
    this.freeFailures = options.freeFailures ?? 3;
    this.baseDelayMs = options.baseDelayMs ?? 1000;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.forgetAfterMs = options.forgetAfterMs ?? 15 * 60 * 1000;
    this.decayMs = options.decayMs ?? Number.POSITIVE_INFINITY;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.resetOnSuccess = options.resetOnSuccess ?? true;
  }

  /** Keys remembered now (for tests of the memory bound). */
  get size(): number {
    return this.entries.size;
  }

  /** Reserves an attempt for `key`, or says how long to wait; a reserved attempt must be settled. */
  begin(key: string): Admission {
    const now = this.now();
    let entry = this.live(key, now);
    if (entry !== undefined && now < entry.blockedUntil) return { admitted: false, retryAfterMs: entry.blockedUntil - now };
    if (entry !== undefined && entry.pending >= Math.max(1, this.freeFailures - entry.failures)) {
      return { admitted: false, retryAfterMs: this.baseDelayMs };
    }
    if (entry === undefined) {
      entry = { failures: 0, decayedAt: now, pending: 0, lastFailureAt: now, blockedUntil: 0 };
      this.remember(key, entry);
    }
    entry.pending++;
    return ADMITTED;
  }

  /** Settles an attempt begun with begin(). Returns true when this failure starts a wait. */
  settle(key: string, failed: boolean): boolean {
    const now = this.now();
    let entry = this.live(key, now);
    if (entry === undefined) {
      if (!failed) return false;
      entry = { failures: 0, decayedAt: now, pending: 1, lastFailureAt: now, blockedUntil: 0 }; // forgotten meanwhile (memory bound)
    }
    entry.pending = Math.max(0, entry.pending - 1);
    let blocks = false;
    if (failed) {
      entry.failures++;
      entry.lastFailureAt = now;
      const over = entry.failures - this.freeFailures;
      if (over >= 0) {
        blocks = entry.blockedUntil <= now;
        entry.blockedUntil = now + Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** over);
      }
      this.entries.delete(key); // re-inserted last: the Map's order is then oldest failure first
      this.remember(key, entry);
    } else if (this.resetOnSuccess) {
      entry.failures = 0;
      entry.blockedUntil = 0;
    }
    if (entry.failures === 0 && entry.pending === 0) this.entries.delete(key);
    return blocks;
  }

  private remember(key: string, entry: Entry): void {
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  private live(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.pending === 0 && now - entry.lastFailureAt >= this.forgetAfterMs && now >= entry.blockedUntil) {
      this.entries.delete(key);
      return undefined;
    }
    const decayed = Math.floor((now - entry.decayedAt) / this.decayMs);
    if (decayed > 0) {
      entry.failures = Math.max(0, entry.failures - decayed);
      entry.decayedAt += decayed * this.decayMs;
    }
    return entry;
  }
}
