import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { AUDIT_ACTIONS, type AuditEntry } from '@flagops/core';
import { InvalidInputError, NotFoundError } from '../errors/kinds.js';
import { type Logger, silentLogger } from '../log/logger.js';
import { backoffMs, SIGNATURE_HEADER, sendOnce, signature } from './webhook-sender.js';
import { type DeliveryRecord, type DeliveryStatus, readWebhookState, type WebhookRecord, WebhookStateFile } from './webhook-state.js';

/** What webhooks need of the audit trail: each organisation's index, newest first, kept current with main. */
export interface AuditFeed {
  get(org: string): Promise<{
    caughtUp(): Promise<void>;
    query(query: { limit: number; cursor?: string }): Promise<{ entries: AuditEntry[]; nextCursor: string | null }>;
  }>;
}

/** Where webhooks learn that main moved (a commit of the control plane, a push). */
export interface MainMoves {
  get(org: string): Promise<{ onMainMoved(listener: () => void): () => void }>;
}

export interface RetryPolicy {
  /** Attempts in all, the first included (default 8: the first and 7 retries). */
  attempts: number;
  /** The wait after the first failure (default 2 s); it doubles with each failure, with jitter. */
  baseDelayMs: number;
  /** The longest wait between two attempts (default 10 minutes). */
  maxDelayMs: number;
  /** How long one attempt may take, answer included (default 10 s). */
  timeoutMs: number;
}

export interface WebhookServiceOptions {
  dataDir: string;
  audit: AuditFeed;
  repos: MainMoves;
  logger?: Logger;
  retry?: Partial<RetryPolicy>;
  now?: () => Date;
}

export interface WebhookInput {
  url?: unknown;
  actions?: unknown;
  secret?: unknown;
}

/** A webhook as the API shows it; the secret only in the answer that created it. */
export interface WebhookView {
  id: string;
  url: string;
  actions: string[];
  createdAt: string;
}

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

const DEFAULT_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 2_000, maxDelayMs: 10 * 60_000, timeoutMs: 10_000 };
/** Finished deliveries kept per webhook (pending ones are always kept). */
const KEPT_FINISHED = 100;
/** Attempts running at once per webhook: a burst of changes does not open a connection per change at once. */
const IN_FLIGHT_PER_WEBHOOK = 4;
/** Entries read back at most when catching up after a restart; beyond, the trail moved on too far to replay. */
const CATCH_UP_LIMIT = 10_000;
const MAX_URL_LENGTH = 2048;
const FIELDS = new Set(['url', 'actions', 'secret']);

/**
 * Webhooks: every new audit entry of an organisation whose action a webhook asks for is POSTed to it, signed,
 * retried with backoff. Entries come from the audit index (control-plane changes and engineers' pushes alike),
 * read after each move of main; delivery runs beside serving and never holds up a commit or a kill.
 *
 * Durable: a delivery is written to `<dataDir>/state/webhooks.json` before its first attempt, and each
 * organisation's position in its audit trail is kept there too, so a stop or a crash loses nothing: a restart
 * retries what was pending and delivers the entries committed since. Delivery is at least once (a crash
 * during an attempt repeats it); `X-Flagops-Delivery` names each delivery so receivers can drop repeats.
 */
export class WebhookService {
  private readonly retry: RetryPolicy;
  private readonly logger: Logger;
  private readonly now: () => Date;
  private readonly file: WebhookStateFile;
  private readonly followed = new Map<string, () => void>();
  private readonly catchUps = new Map<string, { running: Promise<void>; again: boolean }>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly ready = new Map<string, DeliveryRecord[]>();
  private readonly inFlight = new Map<string, number>();
  private closed = false;

  private constructor(
    private readonly options: WebhookServiceOptions,
    private readonly webhooks: WebhookRecord[],
    private readonly cursors: Record<string, string>,
    private deliveries: DeliveryRecord[],
    file: string,
  ) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? (() => new Date());
    this.file = new WebhookStateFile(file, () => ({ webhooks: this.webhooks, cursors: this.cursors, deliveries: this.deliveries }));
  }

  /** Reads the state file, retries what was pending, and follows every organisation that has webhooks. */
  static async open(options: WebhookServiceOptions): Promise<WebhookService> {
    const dir = path.join(options.dataDir, 'state');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'webhooks.json');
    const state = await readWebhookState(file);
    const service = new WebhookService(options, state.webhooks, state.cursors, state.deliveries, file);
    for (const delivery of service.deliveries) if (delivery.status === 'pending') service.schedule(delivery);
    for (const org of new Set(state.webhooks.map((w) => w.org))) {
      // An organisation whose trail cannot be read now is caught up on its next change.
      await service.follow(org).catch((err) => service.logger.error('webhooks: reading the audit trail failed', { org, err }));
    }
    return service;
  }

  async create(org: string, input: WebhookInput): Promise<WebhookView & { secret: string }> {
    const fields = checkInput(input);
    await this.follow(org);
    // Deliveries start with the entries after this point: what was committed before is not sent.
    await this.catchUp(org);
    const record: WebhookRecord = {
      id: `whk_${randomBytes(9).toString('base64url')}`,
      org,
      url: fields.url,
      actions: fields.actions,
      secret: fields.secret ?? `whsec_${randomBytes(24).toString('base64url')}`,
      createdAt: this.now().toISOString(),
    };
    this.webhooks.push(record);
    await this.file.save();
    return { ...view(record), secret: record.secret };
  }

  list(org: string): WebhookView[] {
    return this.webhooks.filter((w) => w.org === org).map(view);
  }

  /** Removes a webhook and its deliveries (pending ones are not attempted again). */
  async remove(org: string, id: string): Promise<WebhookView> {
    const record = this.find(org, id);
    this.webhooks.splice(this.webhooks.indexOf(record), 1);
    for (const delivery of this.deliveries) if (delivery.webhookId === id) this.unschedule(delivery.id);
    this.deliveries = this.deliveries.filter((d) => d.webhookId !== id);
    this.ready.delete(id);
    await this.file.save();
    return view(record);
  }

  /** The delivery log of a webhook, newest first. */
  deliveriesOf(org: string, id: string): DeliveryView[] {
    this.find(org, id);
    return this.deliveries
      .filter((d) => d.webhookId === id)
      .reverse()
      .map(deliveryView);
  }

  /**
   * Resolves once every entry committed to `org` so far has its deliveries written (for tests, and for the
   * routes that want a webhook created now to start after what is already on main).
   */
  async catchUp(org: string): Promise<void> {
    let run = this.catchUps.get(org);
    if (run) {
      run.again = true;
      return run.running;
    }
    run = { running: Promise.resolve(), again: true };
    this.catchUps.set(org, run);
    const current = run;
    run.running = (async () => {
      try {
        while (current.again && !this.closed) {
          current.again = false;
          await this.readNewEntries(org);
        }
      } finally {
        this.catchUps.delete(org);
      }
    })();
    return run.running;
  }

  /** Stops attempting (pending deliveries stay pending on disk for the next start) and finishes writing. */
  async close(): Promise<void> {
    this.closed = true;
    for (const off of this.followed.values()) off();
    this.followed.clear();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.catchUps.values()].map((c) => c.running.catch(() => undefined)));
    await this.file.settled();
  }

  private find(org: string, id: string): WebhookRecord {
    const record = this.webhooks.find((w) => w.id === id && w.org === org);
    if (!record) throw new NotFoundError(`webhook ${id}`);
    return record;
  }

  private async follow(org: string): Promise<void> {
    if (this.followed.has(org) || this.closed) return;
    const repo = await this.options.repos.get(org);
    if (this.followed.has(org)) return;
    this.followed.set(
      org,
      repo.onMainMoved(() => {
        this.catchUp(org).catch((err) =>
          this.logger.error('webhooks: reading the audit trail failed; the next change retries', { org, err }),
        );
      }),
    );
    await this.catchUp(org);
  }

  /** Turns the entries after the organisation's cursor into deliveries, written before any is attempted. */
  private async readNewEntries(org: string): Promise<void> {
    const index = await this.options.audit.get(org);
    await index.caughtUp();
    const cursor = this.cursors[org];
    let page = await index.query({ limit: 500 });
    const newest = page.entries[0]?.id ?? '';
    if (cursor === undefined) {
      // First use in this organisation: deliveries start after what is on main now.
      this.cursors[org] = newest;
      await this.file.save();
      return;
    }
    if (newest === cursor) return;
    const fresh: AuditEntry[] = [];
    let found = cursor === '';
    let tooMany = false;
    outer: for (;;) {
      for (const entry of page.entries) {
        if (entry.id === cursor) {
          found = true;
          break outer;
        }
        fresh.push(entry);
      }
      if (fresh.length >= CATCH_UP_LIMIT) tooMany = true;
      if (page.nextCursor === null || tooMany) break;
      page = await index.query({ limit: 500, cursor: page.nextCursor });
    }
    if (!found) {
      // Either main was rewritten (the entry is gone), or more entries arrived at once than are worth sending one
      // by one (a large import): the receivers are not flooded with them, and deliveries continue from the head.
      const why = tooMany ? `more than ${CATCH_UP_LIMIT} new audit entries at once` : 'the last entry delivered is no longer on main';
      this.logger.warn(`webhooks: ${why}; those entries are not delivered, deliveries continue from main's head`, { org });
      fresh.length = 0;
    }
    const created: DeliveryRecord[] = [];
    const at = this.now().toISOString();
    for (const entry of fresh.reverse()) {
      for (const hook of this.webhooks) {
        if (hook.org !== org || (hook.actions.length > 0 && !hook.actions.includes(entry.action))) continue;
        created.push({
          id: `dlv_${randomBytes(9).toString('base64url')}`,
          webhookId: hook.id,
          auditId: entry.id,
          entry,
          status: 'pending',
          attempts: 0,
          createdAt: at,
          nextAttemptAt: this.now().getTime(),
        });
      }
    }
    this.deliveries.push(...created);
    this.cursors[org] = newest;
    await this.file.save();
    for (const delivery of created) this.schedule(delivery);
  }

  private schedule(delivery: DeliveryRecord): void {
    if (this.closed) return;
    const wait = Math.max(0, (delivery.nextAttemptAt ?? 0) - this.now().getTime());
    const timer = setTimeout(() => {
      this.timers.delete(delivery.id);
      const queue = this.ready.get(delivery.webhookId) ?? [];
      queue.push(delivery);
      this.ready.set(delivery.webhookId, queue);
      this.pump(delivery.webhookId);
    }, wait);
    timer.unref();
    this.timers.set(delivery.id, timer);
  }

  private unschedule(id: string): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }

  private pump(webhookId: string): void {
    const queue = this.ready.get(webhookId);
    while (queue && queue.length > 0 && (this.inFlight.get(webhookId) ?? 0) < IN_FLIGHT_PER_WEBHOOK && !this.closed) {
      const delivery = queue.shift()!;
      this.inFlight.set(webhookId, (this.inFlight.get(webhookId) ?? 0) + 1);
      void this.attempt(delivery).finally(() => {
        this.inFlight.set(webhookId, (this.inFlight.get(webhookId) ?? 1) - 1);
        this.pump(webhookId);
      });
    }
  }

  private async attempt(delivery: DeliveryRecord): Promise<void> {
    const hook = this.webhooks.find((w) => w.id === delivery.webhookId);
    if (!hook) return; // removed meanwhile
    const body = JSON.stringify({ event: 'audit', entry: delivery.entry });
    const headers = { [SIGNATURE_HEADER]: signature(hook.secret, body), 'X-Flagops-Delivery': delivery.id, 'X-Flagops-Event': 'audit' };
    const outcome = await sendOnce(hook.url, body, headers, this.retry.timeoutMs);
    // Stopped meanwhile: what was on disk stands, and the next start attempts it again.
    if (this.closed || !this.deliveries.includes(delivery)) return;
    delivery.attempts++;
    if (outcome.ok) {
      delivery.status = 'delivered';
      delivery.deliveredAt = this.now().toISOString();
      delete delivery.lastError;
      delete delivery.nextAttemptAt;
    } else {
      delivery.lastError = outcome.error;
      if (delivery.attempts >= this.retry.attempts) {
        delivery.status = 'failed';
        delete delivery.nextAttemptAt;
        this.logger.warn('webhook delivery failed; no more attempts', {
          webhook: hook.id,
          auditId: delivery.auditId,
          error: outcome.error,
        });
      } else {
        delivery.nextAttemptAt = this.now().getTime() + backoffMs(delivery.attempts, this.retry.baseDelayMs, this.retry.maxDelayMs);
      }
    }
    if (delivery.status !== 'pending') this.prune(hook.id);
    await this.file.save().catch((err) => this.logger.error('webhooks: writing the delivery log failed', { err }));
    if (delivery.status === 'pending') this.schedule(delivery);
  }

  /** Keeps the newest finished deliveries of a webhook, and every pending one. */
  private prune(webhookId: string): void {
    let finished = 0;
    const keep = new Set<DeliveryRecord>();
    for (let i = this.deliveries.length - 1; i >= 0; i--) {
      const d = this.deliveries[i];
      if (d.webhookId !== webhookId || d.status === 'pending' || ++finished <= KEPT_FINISHED) keep.add(d);
    }
    if (keep.size < this.deliveries.length) this.deliveries = this.deliveries.filter((d) => keep.has(d));
  }
}

function checkInput(input: WebhookInput): { url: string; actions: string[]; secret?: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InvalidInputError('the body must be a JSON object');
  for (const field of Object.keys(input)) {
    if (!FIELDS.has(field)) throw new InvalidInputError(`${field} is not a webhook field (url, actions, secret)`, field);
  }
  return { url: checkUrl(input.url), actions: checkActions(input.actions), ...checkSecret(input.secret) };
}

function checkUrl(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new InvalidInputError('url is required: the http or https URL to POST to', 'url');
  if (value.length > MAX_URL_LENGTH) throw new InvalidInputError(`url must be at most ${MAX_URL_LENGTH} characters`, 'url');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidInputError('url must be an absolute http or https URL', 'url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidInputError(`url must be an http or https URL, not ${url.protocol.replace(/:$/, '')}`, 'url');
  }
  return url.href;
}

function checkActions(value: unknown): string[] {
  if (value === undefined) return [];
  const known: readonly string[] = AUDIT_ACTIONS;
  if (!Array.isArray(value)) throw new InvalidInputError('actions must be a list of audit actions (none: every action)', 'actions');
  for (const action of value) {
    if (typeof action !== 'string' || !known.includes(action))
      throw new InvalidInputError(`actions: ${JSON.stringify(action)} is not an audit action (${known.join(', ')})`, 'actions');
  }
  return [...new Set(value as string[])];
}

function checkSecret(value: unknown): { secret?: string } {
  if (value === undefined) return {};
  if (typeof value !== 'string' || value.length < 16 || value.length > 256 || !/^[\x21-\x7e]+$/.test(value)) {
    throw new InvalidInputError(
      'secret must be 16 to 256 printable characters without spaces (leave it out to have one generated)',
      'secret',
    );
  }
  return { secret: value };
}

function view(record: WebhookRecord): WebhookView {
  return { id: record.id, url: record.url, actions: record.actions, createdAt: record.createdAt };
}

function deliveryView(d: DeliveryRecord): DeliveryView {
  return {
    id: d.id,
    auditId: d.auditId,
    action: d.entry.action,
    status: d.status,
    attempts: d.attempts,
    ...(d.lastError === undefined ? {} : { lastError: d.lastError }),
    createdAt: d.createdAt,
    ...(d.deliveredAt === undefined ? {} : { deliveredAt: d.deliveredAt }),
    ...(d.nextAttemptAt === undefined ? {} : { nextAttemptAt: new Date(d.nextAttemptAt).toISOString() }),
  };
}
