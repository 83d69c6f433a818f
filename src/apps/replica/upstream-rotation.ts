export interface RotationOptions {
  /** Backoff once every upstream has failed in a row: doubling from the first delay to the last. */
  retryMinMs?: number;
  retryMaxMs?: number;
  random?: () => number;
}

/**
 * Which control plane a replica follows, and where it goes when that one fails: the next in the list, round
 * robin. While an upstream is untried since the last one that worked, the next is tried at once; only when
 * all of them have failed in a row does it wait, doubling from `retryMinMs` to `retryMaxMs` (5 s), with
 * jitter so that replicas cut off together do not return together.
 */
export class UpstreamRotation {
  private index = 0;
  private failuresInRow = 0;
  private readonly minMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;

  constructor(
    readonly origins: readonly string[],
    options: RotationOptions = {},
  ) {
    if (origins.length === 0) throw new Error('a replica needs at least one upstream');
    this.minMs = options.retryMinMs ?? 250;
    this.maxMs = options.retryMaxMs ?? 5_000;
    this.random = options.random ?? Math.random;
  }

  get current(): string {
    return this.origins[this.index];
  }

  /** True once every upstream has failed since the last one that answered (or since the start). */
  get allFailed(): boolean {
    return this.failuresInRow >= this.origins.length;
  }

  /** The followed upstream answered: the next failure starts a new round. */
  succeeded(): void {
    this.failuresInRow = 0;
  }

  /** The followed upstream failed: the one to try next, and how long to wait before trying it. */
  failed(): { origin: string; delayMs: number } {
    this.failuresInRow++;
    this.index = (this.index + 1) % this.origins.length;
    if (this.failuresInRow % this.origins.length !== 0) return { origin: this.current, delayMs: 0 };
    const rounds = this.failuresInRow / this.origins.length;
    const backoff = Math.min(this.minMs * 2 ** (rounds - 1), this.maxMs);
    return { origin: this.current, delayMs: backoff * (0.5 + this.random() / 2) };
  }
}
