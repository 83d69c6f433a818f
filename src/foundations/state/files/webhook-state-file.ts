import type { AuditEntry } from '@flagops/core';
import { readJsonStateFile, StateFileError, writeFileAtomic } from '../../state-files/state-files.js';
import type { DeliveryRecord, WebhookState } from '../webhook-store.js';

/**
 * `<dataDir>/state/webhooks.json`, mode 0600 (it holds the secrets). In the file, the entries of pending
 * deliveries are listed once in `entries` and each delivery names its own by position: ten webhooks waiting for
 * one entry hold one copy of it. Files written before hold the entry in each delivery.
 */
export const WEBHOOK_FILE = 'webhooks.json';

const HINT = '; it holds the webhooks and their delivery log: restore it from a backup, or remove it to start without webhooks';

export async function readWebhookState(file: string): Promise<WebhookState> {
  const raw = (await readJsonStateFile(file, HINT)) as (Partial<WebhookState> & { entries?: unknown }) | undefined;
  if (raw === undefined) return { webhooks: [], cursors: {}, deliveries: [] };
  if (
    raw === null ||
    typeof raw !== 'object' ||
    !Array.isArray(raw.webhooks) ||
    !Array.isArray(raw.deliveries) ||
    typeof raw.cursors !== 'object' ||
    raw.cursors === null
  ) {
    throw new StateFileError(`${file} is not a webhook state file${HINT}`);
  }
  const entries = Array.isArray(raw.entries) ? (raw.entries as AuditEntry[]) : [];
  const deliveries = (raw.deliveries as Array<Omit<DeliveryRecord, 'entry'> & { entry?: AuditEntry | number }>).map((stored) => {
    const entry = typeof stored.entry === 'number' ? entries[stored.entry] : stored.entry;
    const action = stored.action ?? entry?.action;
    if (action === undefined) throw new StateFileError(`${file} is not a webhook state file${HINT}`);
    const delivery: DeliveryRecord = { ...stored, action, entry };
    if (delivery.status !== 'pending' || entry === undefined) delete delivery.entry;
    return delivery;
  });
  return { webhooks: raw.webhooks, cursors: raw.cursors, deliveries };
}

/** Writes the state file atomically, readable by its owner only; resolves to its size. */
async function writeWebhookState(file: string, state: WebhookState): Promise<number> {
  const text = serializeWebhookState(state);
  await writeFileAtomic(file, text, 0o600);
  return Buffer.byteLength(text);
}

/** The file's text: compact JSON, each entry once (see WEBHOOK_FILE). */
export function serializeWebhookState(state: WebhookState): string {
  const entries: AuditEntry[] = [];
  const positions = new Map<AuditEntry, number>();
  const deliveries = state.deliveries.map((delivery) => {
    if (!delivery.entry) return delivery;
    let position = positions.get(delivery.entry);
    if (position === undefined) {
      position = entries.push(delivery.entry) - 1;
      positions.set(delivery.entry, position);
    }
    return { ...delivery, entry: position };
  });
  return JSON.stringify({ webhooks: state.webhooks, cursors: state.cursors, entries, deliveries });
}

export interface StateFileOptions {
  /** How the state is written (default: atomically, compact JSON, mode 0600); resolves to the bytes written (anything else counts as none). */
  write?: (file: string, state: WebhookState) => Promise<unknown>;
  /** The longest `saveSoon()` waits (default 1 s). */
  soonMs?: number;
  /** The pace writes keep to at most, in bytes a second (default 8 MiB). */
  bytesPerSecond?: number;
}

interface Soon {
  timer: NodeJS.Timeout;
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Writes of the state file, one at a time, each of the state as it is when the write starts: a caller that
 * awaits `save()` knows that what it changed before calling is on disk. Saves asked for while a write is
 * waiting for its turn share that write, and a write waits until the one before it, at `bytesPerSecond`,
 * would have ended: a small file is written at once, and a big one (thousands of deliveries waiting for
 * receivers that are down) a few times a second however many changes come, not once per change.
 * `saveSoon()` is for what may be lost in a crash (the outcome of an attempt, which is then made again):
 * one write within `soonMs` covers every such change, and what it returns settles with that write.
 */
export class WebhookStateFile {
  private chain: Promise<void> = Promise.resolve();
  /** The write that has not started yet, which a save asked for now can join. */
  private waiting: Promise<void> | null = null;
  private soon: Soon | null = null;
  /** When the last write started, and how many milliseconds it is worth at `bytesPerSecond`. */
  private last = { at: 0, worthMs: 0 };
  private readonly write: (file: string, state: WebhookState) => Promise<unknown>;
  private readonly soonMs: number;
  private readonly bytesPerSecond: number;

  constructor(
    private readonly file: string,
    private readonly state: () => WebhookState,
    options: StateFileOptions = {},
  ) {
    this.write = options.write ?? writeWebhookState;
    this.soonMs = options.soonMs ?? 1_000;
    this.bytesPerSecond = options.bytesPerSecond ?? 8 * 1024 * 1024;
  }

  save(): Promise<void> {
    if (this.waiting) return this.waiting;
    const write = async () => {
      const wait = this.last.at + this.last.worthMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait)); // saves asked for meanwhile join
      this.waiting = null; // from here on, a change needs the next write
      const soon = this.soon; // this write covers what was to be written soon
      this.soon = null;
      if (soon) clearTimeout(soon.timer);
      const at = Date.now();
      try {
        const bytes = await this.write(this.file, this.state());
        this.last = { at, worthMs: ((typeof bytes === 'number' ? bytes : 0) / this.bytesPerSecond) * 1000 };
      } catch (err) {
        soon?.reject(err);
        throw err;
      }
      soon?.resolve();
    };
    const done = this.chain.then(write, write);
    this.waiting = done;
    this.chain = done.catch(() => undefined);
    return done;
  }

  /** A write within `soonMs` (or sooner, with the next save); resolves (or rejects) with that write. */
  saveSoon(): Promise<void> {
    if (this.waiting) return this.waiting;
    if (this.soon) return this.soon.promise;
    let settle: Pick<Soon, 'resolve' | 'reject'> = { resolve: () => {}, reject: () => {} };
    const promise = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    promise.catch(() => {}); // a caller that keeps it hears of a failure; one that does not is not an unhandled rejection
    const timer = setTimeout(() => {
      this.save().catch(() => {}); // the write settles `promise`
    }, this.soonMs);
    timer.unref();
    this.soon = { timer, promise, ...settle };
    return promise;
  }

  /** Writes what `saveSoon()` left waiting, and resolves when every write has finished; rejects when that write fails. */
  async flush(): Promise<void> {
    if (this.soon) await this.save();
    await this.chain;
  }
}
