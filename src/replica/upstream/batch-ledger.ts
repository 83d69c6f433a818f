/**
 * The count batches already taken, per organisation, so that a replica retrying a batch whose answer it lost
 * is not counted twice. Batch ids are remembered for a day (replicas retry within minutes) and at most
 * `limit` per organisation; memory only, so a control-plane restart forgets them (docs/deployment.md).
 */
export class BatchLedger {
  private readonly seen = new Map<string, Map<string, number>>();

  constructor(
    private readonly limit = 100_000,
    private readonly keepMs = 24 * 3600_000,
    private readonly now: () => number = Date.now,
  ) {}

  has(org: string, batchId: string): boolean {
    const at = this.seen.get(org)?.get(batchId);
    return at !== undefined && this.now() - at < this.keepMs;
  }

  remember(org: string, batchId: string): void {
    let ids = this.seen.get(org);
    if (!ids) {
      ids = new Map();
      this.seen.set(org, ids);
    }
    ids.set(batchId, this.now());
    // Maps iterate in insertion order: the first entries are the oldest.
    for (const [id, at] of ids) {
      if (ids.size <= this.limit && this.now() - at < this.keepMs) break;
      ids.delete(id);
    }
  }
}
