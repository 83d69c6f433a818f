import path from 'node:path';
import type { Unsubscribe } from '../unsubscribe.js';
import type { AttemptClaim, DeliveryChanges, DeliveryRecord, WebhookRecord, WebhookState, WebhookStore } from '../webhook-store.js';
import { readWebhookState, type StateFileOptions, WEBHOOK_FILE, WebhookStateFile } from './webhook-state-file.js';

/**
 * Webhooks in `<stateDir>/webhooks.json`, read once and then kept in memory, where every change lands at once;
 * the file is written whole, paced (WebhookStateFile), and one instance owns it: nothing else changes it while
 * the service runs, so `onChange` never calls its listener. A webhook made, a webhook's removal or a position's
 * move that the file does not take is not kept in memory either: memory holds what the file holds, and the next
 * write cannot make it after all.
 */
export class FileWebhookStore implements WebhookStore {
  private webhooks: WebhookRecord[] = [];
  private cursors: Record<string, string> = {};
  /** By id, in the log's order (a Map keeps insertion order, and a replaced value keeps its place). */
  private deliveries = new Map<string, DeliveryRecord>();
  private loaded: Promise<void> | undefined;
  /** Webhooks whose removal is being written (by id, with how many removals of it wait): left out of writes, kept here until one lands. */
  private readonly removing = new Map<string, number>();
  private readonly path: string;
  private readonly file: WebhookStateFile;

  constructor(stateDir: string, options: StateFileOptions = {}) {
    this.path = path.join(stateDir, WEBHOOK_FILE);
    this.file = new WebhookStateFile(this.path, () => this.toWrite(), options);
  }

  async read(): Promise<WebhookState> {
    await this.load();
    return structuredClone({ webhooks: this.webhooks, cursors: this.cursors, deliveries: [...this.deliveries.values()] });
  }

  async createWebhook(record: WebhookRecord): Promise<void> {
    await this.load();
    this.webhooks.push({ ...record, actions: [...record.actions] });
    try {
      await this.file.save();
    } catch (err) {
      // Its caller hears it was not made: the next write must not make it after all.
      this.forget(record.org, record.id);
      throw err;
    }
  }

  async removeWebhook(org: string, id: string): Promise<void> {
    await this.load();
    if (!this.webhooks.some((w) => w.id === id && w.org === org)) return;
    // Gone from the file first and from memory once the file holds that: a removal the disk refuses leaves the
    // webhook here as it stays on disk, so it is not gone now only to come back after a restart.
    this.removing.set(id, (this.removing.get(id) ?? 0) + 1);
    try {
      await this.file.save();
    } finally {
      const left = (this.removing.get(id) ?? 1) - 1;
      if (left > 0) this.removing.set(id, left);
      else this.removing.delete(id);
    }
    this.forget(org, id);
  }

  async advance(org: string, from: string | undefined, cursor: string, changes: DeliveryChanges): Promise<boolean> {
    await this.load();
    if (this.cursors[org] !== from) return false;
    this.cursors[org] = cursor;
    this.apply(changes);
    try {
      await this.file.save();
    } catch (err) {
      // Not recorded, so not taken: the position stays where it was, and the caller makes these deliveries again.
      if (this.cursors[org] === cursor) {
        if (from === undefined) delete this.cursors[org];
        else this.cursors[org] = from;
      }
      for (const delivery of changes.added ?? []) this.deliveries.delete(delivery.id);
      throw err;
    }
    return true;
  }

  /** One instance attempts everything, so a pending delivery is always its to attempt. */
  async claimAttempt(id: string, now: number, _leaseUntil: number): Promise<AttemptClaim> {
    await this.load();
    const current = this.deliveries.get(id);
    const claimed = current?.status === 'pending' && (current.nextAttemptAt ?? 0) <= now;
    return { claimed, ...(current ? { current: { ...current } } : {}) };
  }

  async updateDeliveries(changes: DeliveryChanges, when: 'now' | 'soon'): Promise<void> {
    await this.load();
    this.apply(changes);
    await (when === 'now' ? this.file.save() : this.file.saveSoon());
  }

  async flush(): Promise<void> {
    if (this.loaded) await this.file.flush();
  }

  onChange(_listener: () => void): Unsubscribe {
    return () => {};
  }

  /** What a write puts in the file: everything held, but webhooks being removed and their deliveries. */
  private toWrite(): WebhookState {
    const deliveries = [...this.deliveries.values()];
    if (this.removing.size === 0) return { webhooks: this.webhooks, cursors: this.cursors, deliveries };
    return {
      webhooks: this.webhooks.filter((w) => !this.removing.has(w.id)),
      cursors: this.cursors,
      deliveries: deliveries.filter((d) => !this.removing.has(d.webhookId)),
    };
  }

  private forget(org: string, id: string): void {
    this.webhooks = this.webhooks.filter((w) => !(w.id === id && w.org === org));
    for (const [deliveryId, delivery] of this.deliveries) if (delivery.webhookId === id) this.deliveries.delete(deliveryId);
  }

  /** Copies of the records go in (their entries shared, as the file keeps each entry once). */
  private apply({ added = [], changed = [], removed = [] }: DeliveryChanges): void {
    for (const delivery of added) this.deliveries.set(delivery.id, { ...delivery });
    for (const delivery of changed) if (this.deliveries.has(delivery.id)) this.deliveries.set(delivery.id, { ...delivery });
    for (const id of removed) this.deliveries.delete(id);
  }

  private load(): Promise<void> {
    this.loaded ??= readWebhookState(this.path).then(
      (state) => {
        this.webhooks = state.webhooks;
        this.cursors = state.cursors;
        this.deliveries = new Map(state.deliveries.map((d) => [d.id, d]));
      },
      (err) => {
        this.loaded = undefined; // the next call reads the file again
        throw err;
      },
    );
    return this.loaded;
  }
}
