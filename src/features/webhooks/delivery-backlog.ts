import type { DeliveryRecord } from '../../foundations/state/index.js';

/** Which bound a dropped delivery was over: its webhook's count, or the bytes of all webhooks together. */
export type DropLimit = 'per_webhook' | 'total';

export interface BacklogLimits {
  /** Pending deliveries per webhook. */
  pendingPerWebhook: number;
  /** Bytes of pending deliveries across all webhooks, each counted as its entry's JSON plus DELIVERY_OVERHEAD_BYTES. */
  pendingBytes: number;
}

/** What a pending delivery holds besides its entry: the record, its timer, its line in the state file. */
export const DELIVERY_OVERHEAD_BYTES = 300;

interface WebhookBacklog {
  /** Pending deliveries, oldest first (a Set keeps insertion order and deletes in O(1)). */
  deliveries: Set<DeliveryRecord>;
  bytes: number;
}

/**
 * The pending deliveries of every webhook, counted and weighed, so that a receiver that hangs or fails cannot
 * make them grow without end. Adding one over a bound drops the oldest pending delivery of that webhook (over
 * its count) or of the webhook holding the most bytes (over the total), never one whose attempt is under way:
 * the newest events are the ones a receiver coming back wants, and the audit trail keeps the older ones.
 */
export class DeliveryBacklog {
  private readonly webhooks = new Map<string, WebhookBacklog>();
  private readonly sizes = new Map<DeliveryRecord, number>();
  /** Entries are shared by the deliveries of every webhook: weighed once. */
  private readonly entrySizes = new WeakMap<object, number>();
  private totalBytes = 0;

  constructor(
    private readonly limits: BacklogLimits,
    /** Whether a delivery's attempt is under way: such a delivery is never dropped. */
    private readonly busy: (delivery: DeliveryRecord) => boolean,
  ) {}

  /** Counts a pending delivery in; returns those dropped to stay within the bounds (it may be one of them). */
  add(delivery: DeliveryRecord): Array<{ delivery: DeliveryRecord; limit: DropLimit }> {
    const size = this.sizeOf(delivery);
    let backlog = this.webhooks.get(delivery.webhookId);
    if (!backlog) {
      backlog = { deliveries: new Set(), bytes: 0 };
      this.webhooks.set(delivery.webhookId, backlog);
    }
    backlog.deliveries.add(delivery);
    backlog.bytes += size;
    this.sizes.set(delivery, size);
    this.totalBytes += size;
    const dropped: Array<{ delivery: DeliveryRecord; limit: DropLimit }> = [];
    while (backlog.deliveries.size > this.limits.pendingPerWebhook) {
      const oldest = this.oldestIdle(backlog);
      if (!oldest) break;
      this.remove(oldest);
      dropped.push({ delivery: oldest, limit: 'per_webhook' });
    }
    while (this.totalBytes > this.limits.pendingBytes) {
      const oldest = this.oldestIdleOfBiggest();
      if (!oldest) break;
      this.remove(oldest);
      dropped.push({ delivery: oldest, limit: 'total' });
    }
    return dropped;
  }

  /** Counts a delivery out: it finished, or its webhook is gone. */
  remove(delivery: DeliveryRecord): void {
    const size = this.sizes.get(delivery);
    if (size === undefined) return;
    this.sizes.delete(delivery);
    this.totalBytes -= size;
    const backlog = this.webhooks.get(delivery.webhookId);
    if (!backlog) return;
    backlog.deliveries.delete(delivery);
    backlog.bytes -= size;
    if (backlog.deliveries.size === 0) this.webhooks.delete(delivery.webhookId);
  }

  removeWebhook(webhookId: string): void {
    for (const delivery of this.webhooks.get(webhookId)?.deliveries ?? []) this.remove(delivery);
  }

  has(delivery: DeliveryRecord): boolean {
    return this.sizes.has(delivery);
  }

  /** Pending deliveries of a webhook. */
  count(webhookId: string): number {
    return this.webhooks.get(webhookId)?.deliveries.size ?? 0;
  }

  private sizeOf(delivery: DeliveryRecord): number {
    const entry = delivery.entry;
    if (!entry) return DELIVERY_OVERHEAD_BYTES;
    let size = this.entrySizes.get(entry);
    if (size === undefined) {
      size = Buffer.byteLength(JSON.stringify(entry));
      this.entrySizes.set(entry, size);
    }
    return size + DELIVERY_OVERHEAD_BYTES;
  }

  private oldestIdle(backlog: WebhookBacklog): DeliveryRecord | undefined {
    for (const delivery of backlog.deliveries) if (!this.busy(delivery)) return delivery;
    return undefined;
  }

  /** The oldest delivery not under way of the webhook holding the most bytes (the next one if all of its are). */
  private oldestIdleOfBiggest(): DeliveryRecord | undefined {
    const biggestFirst = [...this.webhooks.values()].sort((a, b) => b.bytes - a.bytes);
    for (const backlog of biggestFirst) {
      const oldest = this.oldestIdle(backlog);
      if (oldest) return oldest;
    }
    return undefined;
  }
}
