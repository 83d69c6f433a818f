export interface ThrottleOptions {
  now?: () => number;
  /** Failures allowed before any wait (default 3). */
  freeFailures?: number;
  /** The first wait; each further failure doubles it (default 1 s). */
  baseDelayMs?: number;
  /** The longest wait (default 30 s): long enough to stop guessing, short enough not to lock a person out. */
  maxDelayMs?: number;
  /** A failure is forgotten after this long without another (default 15 min). */
  forgetAfterMs?: number;
  /** Bound on remembered keys, so a flood of usernames cannot grow memory without limit. */
  maxEntries?: number;
}

interface Entry {
  failures: number;
  lastFailureAt: number;
  blockedUntil: number;
}

/**
 * Slows down password guessing. Keyed by client address and username together: a guesser at one address is
 * slowed, while someone elsewhere cannot keep a colleague from signing in by failing on purpose.
 */
export class SignInThrottle {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly freeFailures: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly forgetAfterMs: number;
  private readonly maxEntries: number;

  constructor(options: ThrottleOptions = {}) {
    this.now = options.now ?? Date.now;
    this.freeFailures = options.freeFailures ?? 3;
    this.baseDelayMs = options.baseDelayMs ?? 1000;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.forgetAfterMs = options.forgetAfterMs ?? 15 * 60 * 1000;
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  /** How long the caller must wait before trying again; 0 when it may try now. */
  retryAfterMs(key: string): number {
    const entry = this.live(key);
    return entry ? Math.max(0, entry.blockedUntil - this.now()) : 0;
  }

  failed(key: string): void {
    const now = this.now();
    const entry = this.live(key) ?? { failures: 0, lastFailureAt: now, blockedUntil: 0 };
    entry.failures++;
    entry.lastFailureAt = now;
    const over = entry.failures - this.freeFailures;
    if (over >= 0) entry.blockedUntil = now + Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** over);
    this.entries.delete(key); // re-inserted last: the Map's order is then oldest failure first
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  succeeded(key: string): void {
    this.entries.delete(key);
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.lastFailureAt >= this.forgetAfterMs && this.now() >= entry.blockedUntil) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
