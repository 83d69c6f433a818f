import type { Logger } from '../../foundations/log/logger.js';
import type { DropLimit } from './delivery-backlog.js';

/** How often a webhook that keeps losing deliveries is logged about (the first drop is logged at once). */
const LOG_EVERY_MS = 60_000;

/**
 * Deliveries dropped because a backlog was full: counted per organisation and bound (for
 * `flagops_webhook_deliveries_dropped_total`) and logged per webhook, at once for the first and then one line a
 * minute with how many more, so a receiver that stays down does not flood the log.
 */
export class DeliveryDrops {
  private readonly counts = new Map<string, { org: string; limit: DropLimit; count: number }>();
  /** Webhooks logged about in the last minute, with the drops since. */
  private readonly recent = new Map<string, { org: string; limit: DropLimit; count: number }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly logger: Logger) {}

  note(webhook: string, org: string, limit: DropLimit, count: number): void {
    if (count === 0) return;
    const key = `${org}\u0000${limit}`;
    const total = this.counts.get(key) ?? { org, limit, count: 0 };
    total.count += count;
    this.counts.set(key, total);
    const recent = this.recent.get(webhook);
    if (recent) {
      recent.count += count;
      recent.limit = limit;
      return;
    }
    this.log(webhook, org, limit, count);
    this.recent.set(webhook, { org, limit, count: 0 });
    if (!this.timer) {
      this.timer = setInterval(() => this.logRecent(), LOG_EVERY_MS);
      this.timer.unref();
    }
  }

  /** Totals since the start, per organisation and bound. */
  totals(): Iterable<{ org: string; limit: DropLimit; count: number }> {
    return this.counts.values();
  }

  close(): void {
    this.logRecent();
    this.logRecent(); // the second pass finds nothing new and stops the timer
  }

  private logRecent(): void {
    for (const [webhook, recent] of this.recent) {
      if (recent.count === 0) this.recent.delete(webhook);
      else {
        this.log(webhook, recent.org, recent.limit, recent.count);
        recent.count = 0;
      }
    }
    if (this.recent.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private log(webhook: string, org: string, limit: DropLimit, dropped: number): void {
    const why = limit === 'per_webhook' ? 'its receiver is not keeping up' : 'the receivers of all webhooks are not keeping up';
    this.logger.warn(`webhook deliveries dropped, marked failed: ${why}`, { webhook, org, limit, dropped });
  }
}
