import type { DeliveryRecord, DeliveryStatus } from '../../foundations/state/index.js';

/** A delivery as the API shows it. */
export interface DeliveryView {
  id: string;
  auditId: string;
  action: string;
  status: DeliveryStatus;
  attempts: number;
  lastError?: string;
  createdAt: string;
  deliveredAt?: string;
  nextAttemptAt?: string;
}

/** Finished deliveries kept per webhook (pending ones are always kept). */
const KEPT_FINISHED = 100;
/** Finished deliveries beyond KEPT_FINISHED a webhook may hold before the log is pruned: pruning reads it all. */
const PRUNE_SLACK = 20;

/**
 * Every delivery of every webhook, oldest first, as the state file keeps them: all pending ones and the last
 * 100 finished per webhook (a few more between two prunings, never shown).
 */
export class DeliveryLog {
  /** Per webhook, the finished deliveries in `records`. */
  private readonly finished = new Map<string, number>();

  constructor(public records: DeliveryRecord[]) {
    for (const d of records) if (d.status !== 'pending') this.countFinished(d.webhookId);
  }

  add(deliveries: DeliveryRecord[]): void {
    this.records.push(...deliveries);
  }

  /** Notes that a delivery finished (delivered, failed or dropped); prune() keeps the log within its bound. */
  countFinished(webhookId: string): void {
    this.finished.set(webhookId, (this.finished.get(webhookId) ?? 0) + 1);
  }

  /** The log of one webhook, newest first: every pending delivery and the last 100 finished. */
  of(webhookId: string): DeliveryView[] {
    const log: DeliveryView[] = [];
    let finished = 0;
    for (let i = this.records.length - 1; i >= 0; i--) {
      const d = this.records[i];
      if (d.webhookId !== webhookId || (d.status !== 'pending' && ++finished > KEPT_FINISHED)) continue;
      log.push(deliveryView(d));
    }
    return log;
  }

  /** Removes a webhook's deliveries; returns them. */
  removeWebhook(webhookId: string): DeliveryRecord[] {
    const removed = this.records.filter((d) => d.webhookId === webhookId);
    this.records = this.records.filter((d) => d.webhookId !== webhookId);
    this.finished.delete(webhookId);
    return removed;
  }

  /** Keeps the newest finished deliveries of each webhook, and every pending one, once a webhook has too many; returns the ids of those dropped. */
  prune(): string[] {
    if (![...this.finished.values()].some((n) => n > KEPT_FINISHED + PRUNE_SLACK)) return [];
    const kept = new Map<string, number>();
    const keep = new Set<DeliveryRecord>();
    for (let i = this.records.length - 1; i >= 0; i--) {
      const d = this.records[i];
      if (d.status === 'pending') keep.add(d);
      else {
        const n = (kept.get(d.webhookId) ?? 0) + 1;
        kept.set(d.webhookId, n);
        if (n <= KEPT_FINISHED) keep.add(d);
      }
    }
    const dropped = this.records.filter((d) => !keep.has(d)).map((d) => d.id);
    this.records = this.records.filter((d) => keep.has(d));
    for (const id of this.finished.keys()) this.finished.set(id, kept.get(id) ?? 0);
    return dropped;
  }
}

function deliveryView(d: DeliveryRecord): DeliveryView {
  return {
    id: d.id,
    auditId: d.auditId,
    action: d.action,
    status: d.status,
    attempts: d.attempts,
    ...(d.lastError === undefined ? {} : { lastError: d.lastError }),
    createdAt: d.createdAt,
    ...(d.deliveredAt === undefined ? {} : { deliveredAt: d.deliveredAt }),
    ...(d.nextAttemptAt === undefined ? {} : { nextAttemptAt: new Date(d.nextAttemptAt).toISOString() }),
  };
}
