import type { AuditEntry } from '@flagops/core';
import { readJsonStateFile, writeJsonStateFile } from '../state-files/state-files.js';

export interface WebhookRecord {
  id: string;
  org: string;
  url: string;
  /** The audit actions delivered; empty: every action. */
  actions: string[];
  /** The HMAC-SHA256 key of `X-Flagops-Signature`. */
  secret: string;
  createdAt: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  auditId: string;
  entry: AuditEntry;
  status: DeliveryStatus;
  attempts: number;
  lastError?: string;
  createdAt: string;
  /** Epoch ms of the next attempt, while pending. */
  nextAttemptAt?: number;
  deliveredAt?: string;
}

/** Everything webhooks keep: `<dataDir>/state/webhooks.json`, mode 0600 (it holds the secrets). */
export interface WebhookState {
  webhooks: WebhookRecord[];
  /** Per organisation, the newest audit entry (its commit id) already turned into deliveries; '' for an empty trail. */
  cursors: Record<string, string>;
  deliveries: DeliveryRecord[];
}

const HINT = '; it holds the webhooks and their delivery log: restore it from a backup, or remove it to start without webhooks';

export async function readWebhookState(file: string): Promise<WebhookState> {
  const raw = (await readJsonStateFile(file, HINT)) as Partial<WebhookState> | undefined;
  if (raw === undefined) return { webhooks: [], cursors: {}, deliveries: [] };
  if (!Array.isArray(raw.webhooks) || !Array.isArray(raw.deliveries) || typeof raw.cursors !== 'object' || raw.cursors === null) {
    throw new Error(`${file} is not a webhook state file${HINT}`);
  }
  return { webhooks: raw.webhooks, cursors: raw.cursors, deliveries: raw.deliveries };
}

/**
 * Writes of the state file, one at a time, each of the state as it is when the write starts: a caller that
 * awaits `save()` knows that what it changed before calling is on disk. Saves asked for while a write is
 * waiting for its turn share that write, so a burst of changes (an import's thousand entries) costs a few
 * writes of the file, not one per change.
 */
export class WebhookStateFile {
  private chain: Promise<void> = Promise.resolve();
  /** The write that has not started yet, which a save asked for now can join. */
  private waiting: Promise<void> | null = null;

  constructor(
    private readonly file: string,
    private readonly state: () => WebhookState,
    private readonly write: (file: string, content: unknown) => Promise<void> = writeJsonStateFile,
  ) {}

  save(): Promise<void> {
    if (this.waiting) return this.waiting;
    const write = () => {
      this.waiting = null; // from here on, a change needs the next write
      return this.write(this.file, this.state());
    };
    const done = this.chain.then(write, write);
    this.waiting = done;
    this.chain = done.catch(() => undefined);
    return done;
  }

  /** Resolves when every write started so far has finished. */
  settled(): Promise<void> {
    return this.chain;
  }
}
