import type { DeliveryRecord } from '../../foundations/state/index.js';

export interface DispatchLimits {
  /** Attempts running at once per webhook whose receiver answers. */
  connectionsPerWebhook: number;
  /** Attempts running at once across all webhooks. */
  connections: number;
}

/**
 * When each pending delivery is attempted: at its `nextAttemptAt`, and then only while its webhook and the
 * service have a free slot. A webhook has `connectionsPerWebhook` slots while its receiver answers, and one
 * after a failed attempt until an attempt succeeds: a receiver that hangs holds one connection, not several,
 * and one that fails is probed rather than hammered. Slots free up fairly: a webhook that was given one goes
 * to the back of the line.
 */
export class DeliveryDispatcher {
  private readonly timers = new Map<DeliveryRecord, NodeJS.Timeout>();
  /** Per webhook, the deliveries due and waiting for a slot, oldest first; a webhook's turn moves it last. */
  private readonly ready = new Map<string, Set<DeliveryRecord>>();
  private readonly running = new Map<string, number>();
  private readonly underWay = new Set<DeliveryRecord>();
  private readonly failing = new Set<string>();
  private closed = false;

  constructor(
    private readonly limits: DispatchLimits,
    private readonly attempt: (delivery: DeliveryRecord) => Promise<void>,
    private readonly now: () => number,
  ) {}

  /** Attempts the delivery at its `nextAttemptAt` (at once when that has passed) or when a slot frees up after. */
  schedule(delivery: DeliveryRecord): void {
    if (this.closed) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(delivery);
        const queue = this.ready.get(delivery.webhookId) ?? new Set();
        queue.add(delivery);
        this.ready.set(delivery.webhookId, queue);
        this.pump();
      },
      Math.max(0, (delivery.nextAttemptAt ?? 0) - this.now()),
    );
    timer.unref();
    this.timers.set(delivery, timer);
  }

  /** Forgets a delivery that is no longer to be attempted (dropped, or its webhook removed). */
  cancel(delivery: DeliveryRecord): void {
    const timer = this.timers.get(delivery);
    if (timer) clearTimeout(timer);
    this.timers.delete(delivery);
    const queue = this.ready.get(delivery.webhookId);
    queue?.delete(delivery);
    if (queue?.size === 0) this.ready.delete(delivery.webhookId);
  }

  forgetWebhook(webhookId: string): void {
    this.ready.delete(webhookId);
    this.failing.delete(webhookId);
  }

  /** Whether an attempt of this delivery is running. */
  busy(delivery: DeliveryRecord): boolean {
    return this.underWay.has(delivery);
  }

  /** What the last finished attempt of a webhook said of its receiver. */
  receiverAnswered(webhookId: string, answered: boolean): void {
    if (answered) this.failing.delete(webhookId);
    else this.failing.add(webhookId);
  }

  /** Attempts under way, per webhook id. */
  runningOf(webhookId: string): number {
    return this.running.get(webhookId) ?? 0;
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.ready.clear();
  }

  private pump(): void {
    let started = true;
    while (started && !this.closed && this.underWay.size < this.limits.connections) {
      started = false;
      for (const [webhookId, queue] of this.ready) {
        if (this.underWay.size >= this.limits.connections) break;
        const slots = this.failing.has(webhookId) ? 1 : this.limits.connectionsPerWebhook;
        if (this.runningOf(webhookId) >= slots) continue;
        const [delivery] = queue;
        this.ready.delete(webhookId);
        if (!delivery) continue;
        queue.delete(delivery);
        if (queue.size > 0) this.ready.set(webhookId, queue); // to the back of the line
        this.start(delivery);
        started = true;
      }
    }
  }

  private start(delivery: DeliveryRecord): void {
    const webhookId = delivery.webhookId;
    this.underWay.add(delivery);
    this.running.set(webhookId, this.runningOf(webhookId) + 1);
    // attempt() records its own failures; nothing is left to say here but that the slot is free.
    void this.attempt(delivery)
      .catch(() => undefined)
      .finally(() => {
        this.underWay.delete(delivery);
        const left = this.runningOf(webhookId) - 1;
        if (left > 0) this.running.set(webhookId, left);
        else this.running.delete(webhookId);
        this.pump();
      });
  }
}
