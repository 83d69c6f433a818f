import { Counter, Gauge, type Registry } from 'prom-client';

/** What webhooks report, read when Prometheus scrapes. */
export interface WebhookCounts {
  /** Pending deliveries per organisation. */
  pending: Iterable<{ org: string; count: number }>;
  /** Deliveries dropped by a full backlog since the start, per organisation and bound (`per_webhook`, `total`). */
  dropped: Iterable<{ org: string; limit: string; count: number }>;
}

/**
 * The control port's webhook families: deliveries waiting for their receivers, and those dropped because a
 * backlog was full (marked failed in the delivery log). Labels are bounded: organisations and the two bounds.
 */
export function registerWebhookFamilies(registry: Registry, counts: () => WebhookCounts): void {
  new Gauge({
    name: 'flagops_webhook_deliveries_pending',
    help: 'Webhook deliveries waiting for their receiver (first attempt or retry), per organisation.',
    labelNames: ['org'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { org, count } of counts().pending) this.set({ org }, count);
    },
  });
  new Counter({
    name: 'flagops_webhook_deliveries_dropped_total',
    help: 'Webhook deliveries dropped, marked failed, because a backlog was full: limit per_webhook (one webhook held its most) or total (all webhooks held their most bytes).',
    labelNames: ['org', 'limit'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { org, limit, count } of counts().dropped) this.inc({ org, limit }, count);
    },
  });
}
