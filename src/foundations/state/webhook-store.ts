import type { AuditAction, AuditEntry } from '@flagops/core';
import type { Unsubscribe } from './unsubscribe.js';

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

/** What webhooks send besides audit entries: a flag became stale (rolled out), or passed its expiry. */
export const FLAG_HEALTH_ACTIONS = ['flag_stale', 'flag_expired'] as const;
export type FlagHealthAction = (typeof FLAG_HEALTH_ACTIONS)[number];

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  auditId: string;
  action: AuditAction | FlagHealthAction;
  /**
   * What is sent, kept while pending rather than read back from the audit trail: `auditId` names a commit,
   * which several entries share, and main may be rewritten. A finished delivery keeps no copy of it.
   */
  entry?: AuditEntry;
  status: DeliveryStatus;
  attempts: number;
  lastError?: string;
  createdAt: string;
  /** Epoch ms of the next attempt, while pending. */
  nextAttemptAt?: number;
  deliveredAt?: string;
}

/** Everything webhooks keep. */
export interface WebhookState {
  webhooks: WebhookRecord[];
  /** Per organisation, the newest audit entry (its commit id) already turned into deliveries; '' for an empty trail. */
  cursors: Record<string, string>;
  /** The delivery log, oldest first: every pending delivery and the recent finished ones. */
  deliveries: DeliveryRecord[];
}

/** Changes to the delivery log, applied in this order: deliveries added, deliveries changed (by id), ids removed. */
export interface DeliveryChanges {
  added?: readonly DeliveryRecord[];
  /** Deliveries as they are now; one the log no longer holds is ignored. */
  changed?: readonly DeliveryRecord[];
  removed?: readonly string[];
}

/** The answer to claimAttempt. */
export interface AttemptClaim {
  claimed: boolean;
  current?: DeliveryRecord;
  /** Epoch ms when another instance's claim runs out, when one holds it. */
  takenUntil?: number;
}

/** Webhooks, each organisation's position in its audit trail, and the delivery log. */
export interface WebhookStore {
  /** Everything kept, as of now: a copy the caller may keep (one entry shared by several deliveries stays shared). */
  read(): Promise<WebhookState>;
  /** Adds a webhook; resolves once that is durable. */
  createWebhook(record: WebhookRecord): Promise<void>;
  /** Removes the webhook `id` of `org` and its deliveries; resolves once that is durable, and rejects with both kept when it cannot be. */
  removeWebhook(org: string, id: string): Promise<void>;
  /**
   * Moves `org`'s position in its audit trail from `from` (undefined: none yet) to `cursor` together with the
   * deliveries made of the entries up to it (all of it at once: a crash leaves both or neither); resolves once
   * durable, so deliveries are on record before they are attempted. Resolves to false, changing nothing, when
   * the position is no longer `from`: another instance moved it and made those deliveries; read again. Rejects,
   * changing nothing, when it cannot be made durable.
   */
  advance(org: string, from: string | undefined, cursor: string, changes: DeliveryChanges): Promise<boolean>;
  /**
   * Takes the pending delivery `id` for one attempt until `leaseUntil` (epoch ms), or until its outcome is
   * recorded: while taken, no other instance attempts it. `claimed` false when it is not due at `now`, taken by
   * another instance, finished, or gone; `current` is the delivery as stored (undefined: gone).
   */
  claimAttempt(id: string, now: number, leaseUntil: number): Promise<AttemptClaim>;
  /**
   * Records what attempts did (and ends their claims). `now`: resolves once durable. `soon`: for what a crash may lose (the attempt is
   * then made again); written within about a second, with other such changes, and resolves then.
   */
  updateDeliveries(changes: DeliveryChanges, when: 'now' | 'soon'): Promise<void>;
  /** Writes what `soon` left waiting; resolves once everything recorded is durable. */
  flush(): Promise<void>;
  /** Calls `listener` when webhooks may have changed elsewhere; see Unsubscribe. */
  onChange(listener: () => void): Unsubscribe;
}
