import { randomBytes } from 'node:crypto';
import type { AuditEntry } from '@flagops/core';
import { NotFoundError } from '../../foundations/errors/kinds.js';
import { type Logger, silentLogger } from '../../foundations/log/logger.js';
import {
  type AttemptClaim,
  type ControlState,
  type DeliveryRecord,
  FLAG_HEALTH_ACTIONS,
  type FlagHealthAction,
  type WebhookRecord,
  type WebhookStore,
} from '../../foundations/state/index.js';
import { StateFileError } from '../../foundations/state-files/state-files.js';
import { type BacklogLimits, DeliveryBacklog, type DropLimit } from './delivery-backlog.js';
import { DeliveryDispatcher, type DispatchLimits } from './delivery-dispatcher.js';
import { DeliveryDrops } from './delivery-drops.js';
import { DeliveryLog, type DeliveryView } from './delivery-log.js';
import { type CommitLine, entriesAfterRebuild, entriesSince } from './entries-since.js';
import { checkWebhookInput, type WebhookInput } from './webhook-input.js';
import { backoffMs, SIGNATURE_HEADER, signature, WebhookSender } from './webhook-sender.js';

/** What webhooks need of the audit trail: each organisation's index, newest first, kept current with main. */
export interface AuditFeed {
  get(org: string): Promise<{
    caughtUp(): Promise<void>;
    query(query: { limit: number; cursor?: string }): Promise<{ entries: AuditEntry[]; nextCursor: string | null }>;
  }>;
}

/** Where webhooks learn that main moved (a commit of the control plane, a push), and which commits it has. */
export interface MainMoves {
  get(org: string): Promise<{ onMainMoved(listener: () => void): () => void } & CommitLine>;
}

/**
 * Remote mode: where an organisation's main holds kills its git remote has not taken (made while the host could
 * not take them). Their entries are delivered once the remote has them, under the ids they have there: when
 * main is rebuilt on what the host got meanwhile, a kill is made again under a new id, or not at all when the
 * host has it already (another control plane's kill of the same flag), and the commit first made is in no
 * audit trail.
 */
export interface HeldBack {
  /** Whether `org`'s main holds kills its git remote lacks now. */
  holding(org: string): boolean;
  /** Calls `listener` with the organisation once its git remote has all its main held back. */
  onReleased(listener: (org: string) => void): () => void;
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

/**
 * How much deliveries waiting for their receivers may hold (docs/webhooks.md, "Limits"): pending deliveries
 * per webhook (default 1,000), their bytes across all webhooks (default 16 MiB), attempts at once per webhook
 * (default 4) and across all webhooks (default 32).
 */
export type DeliveryLimits = BacklogLimits & DispatchLimits;

export interface WebhookServiceOptions {
  /**
   * Where webhooks, the audit trail positions and the delivery log are kept; its notices say when the state
   * answers again after it could not be reached.
   */
  state: Pick<ControlState, 'webhooks' | 'notices'>;
  audit: AuditFeed;
  repos: MainMoves;
  /** Remote mode: entries main holds that the git remote lacks wait for it. */
  heldBack?: HeldBack;
  logger?: Logger;
  retry?: Partial<RetryPolicy>;
  limits?: Partial<DeliveryLimits>;
  now?: () => Date;
}

export type { WebhookInput } from './webhook-input.js';

/** A webhook as the API shows it; the secret only in the answer that created it. */
export interface WebhookView {
  id: string;
  url: string;
  actions: string[];
  createdAt: string;
}

export type { DeliveryView } from './delivery-log.js';

const DEFAULT_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 2_000, maxDelayMs: 10 * 60_000, timeoutMs: 10_000 };
const DEFAULT_LIMITS: DeliveryLimits = {
  // Ten times what a receiver answering at 200 changes a minute has pending while it retries for 2 to 4 minutes;
  // hours of an organisation's usual changes.
  pendingPerWebhook: 1_000,
  // About 25,000 deliveries of the usual size (a few hundred bytes of entry each): ten webhooks full and more.
  pendingBytes: 16 * 1024 * 1024,
  connectionsPerWebhook: 4,
  connections: 32,
};
/** Idle connections are kept this long for the next delivery (less when the receiver says so). */
const IDLE_CONNECTION_MS = 15_000;
/**
 * After the audit trail could not be turned into deliveries (the database unreachable, a full disk), it is read
 * again this soon, then twice as late each time up to the last: the changes made meanwhile (a kill while the
 * database is down) are delivered without waiting for another change.
 */
const READ_RETRY_FIRST_MS = 1_000;
const READ_RETRY_LAST_MS = 30_000;
/** Entries read back at most when catching up after a restart; beyond, the trail moved on too far to replay. */
const CATCH_UP_LIMIT = 10_000;
/** Where what was told of flag health is kept, beside the organisations' positions in their audit trails. */
const FLAG_HEALTH_POSITION = 'flag-health:';
/** Per letter of a flag's mark, the event told when it appears. */
const HEALTH_EVENTS: ReadonlyArray<[string, FlagHealthAction]> = [
  ['r', 'flag_stale'],
  ['e', 'flag_expired'],
];

/** One active flag's health, as the health check hands it to webhooks. */
export interface FlagHealthNow {
  projectSlug: string;
  key: string;
  status: string;
  reasons: ReadonlyArray<{ code: string; message: string }>;
}

/** `e` when it is past its expiry, `r` when it is stale for another reason (rolled out); '' when neither. */
function healthMark(flag: FlagHealthNow): string {
  if (flag.status !== 'stale') return '';
  const expired = flag.reasons.some((r) => r.code === 'expired');
  const other = flag.reasons.some((r) => r.code !== 'expired' && r.code !== 'no_evaluations');
  return `${other ? 'r' : ''}${expired ? 'e' : ''}`;
}

function parseMarks(text: string): Record<string, string> {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' ? (value as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/** An attempt's claim outlasts its timeout by this much, so no other instance starts while it may still be sent. */
const LEASE_MARGIN_MS = 5_000;

/**
 * Webhooks: every new audit entry of an organisation whose action a webhook asks for is POSTed to it, signed,
 * retried with backoff. Entries come from the audit index (control-plane changes and engineers' pushes alike),
 * read after each move of main; delivery runs beside serving and never holds up a commit or a kill.
 *
 * Durable: a delivery is recorded in the control plane's state (WebhookStore) before its first attempt, with
 * each organisation's position in its audit trail, so a stop or a crash loses nothing: a restart retries what
 * was pending and delivers the entries committed since; entries whose deliveries cannot be written now (the
 * database down) are read again with backoff until they can. Instances sharing the state (several control planes
 * on one database) deliver each entry once between them: one moves the organisation's position and makes the
 * deliveries, and each attempt is claimed by one. Delivery is at least once (a crash
 * during an attempt, or within a second after it, repeats it); `X-Flagops-Delivery` names each delivery so
 * receivers can drop repeats.
 *
 * Bounded: deliveries waiting for a receiver that hangs or fails are limited in number, bytes and connections
 * (DeliveryLimits); what a full backlog drops is marked failed, counted and logged (DeliveryBacklog).
 */
export class WebhookService {
  private readonly retry: RetryPolicy;
  private readonly logger: Logger;
  private readonly now: () => Date;
  private readonly store: WebhookStore;
  /** Writes nobody awaits whose failure is already being logged: one line per failed write, not per change. */
  private readonly watchedWrites = new WeakSet<Promise<void>>();
  private readonly followed = new Map<string, () => void>();
  private readonly catchUps = new Map<string, { running: Promise<void>; again: boolean }>();
  /** Organisations whose trail could not be read: when it is read again, and the wait before that. */
  private readonly failingReads = new Map<string, { timer: NodeJS.Timeout; delayMs: number }>();
  private readonly sender: WebhookSender;
  private readonly dispatcher: DeliveryDispatcher;
  private readonly backlog: DeliveryBacklog;
  private readonly drops: DeliveryDrops;
  private readonly limits: DeliveryLimits;
  private readonly log: DeliveryLog;
  private closed = false;
  private stopHearing: () => void = () => {};

  private constructor(
    private readonly options: WebhookServiceOptions,
    private readonly webhooks: WebhookRecord[],
    private readonly cursors: Record<string, string>,
    deliveries: DeliveryRecord[],
  ) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? (() => new Date());
    this.store = options.state.webhooks;
    this.log = new DeliveryLog(deliveries);
    this.sender = new WebhookSender({ idlePerReceiver: this.limits.connectionsPerWebhook, idleMs: IDLE_CONNECTION_MS });
    this.dispatcher = new DeliveryDispatcher(
      this.limits,
      (delivery) => this.attempt(delivery),
      () => this.now().getTime(),
    );
    this.backlog = new DeliveryBacklog(this.limits, (delivery) => this.dispatcher.busy(delivery));
    this.drops = new DeliveryDrops(this.logger);
  }

  /** Reads what is kept, retries what was pending, and follows every organisation that has webhooks. */
  static async open(options: WebhookServiceOptions): Promise<WebhookService> {
    const state = await options.state.webhooks.read();
    const service = new WebhookService(options, state.webhooks, state.cursors, state.deliveries);
    const pending = state.deliveries.filter((d) => d.status === 'pending');
    // A log written with higher bounds (or before there were any) is brought within them now.
    const dropped = service.enqueue(pending);
    if (dropped.length > 0) await service.store.updateDeliveries({ changed: dropped, removed: service.log.prune() }, 'now');
    for (const org of new Set(state.webhooks.map((w) => w.org))) {
      // An organisation whose trail cannot be read now is read again shortly. A damaged state file the repository
      // needs (its signing key) stops the start instead, with the start's one line: no retry would mend it.
      await service.follow(org).catch((err) => {
        if (err instanceof StateFileError) throw err;
        service.readFailed(org, err);
      });
    }
    const stopHearingWebhooks = options.state.webhooks.onChange(() => {
      service.adoptWebhooks().catch((err) => service.logger.warn('webhooks: reading what another instance changed failed', { err }));
    });
    const stopHearingReleases = options.heldBack?.onReleased((org) => {
      if (service.followed.has(org)) service.readOn(org);
    });
    // The database answers again: what could not be read while it was down is read now, not at the next retry.
    const stopHearingResyncs = options.state.notices.onResync(() => {
      for (const org of [...service.failingReads.keys()]) service.readOn(org);
    });
    service.stopHearing = () => {
      stopHearingWebhooks();
      stopHearingReleases?.();
      stopHearingResyncs();
    };
    return service;
  }

  /**
   * Another instance sharing the state created or removed webhooks: this one delivers to the same ones, so a
   * webhook works through whichever control plane made it (each delivery is still attempted once, by claim).
   */
  private async adoptWebhooks(): Promise<void> {
    if (this.closed) return;
    const stored = await this.store.read();
    const ids = new Set(stored.webhooks.map((w) => w.id));
    for (const hook of [...this.webhooks]) if (!ids.has(hook.id)) this.forget(hook);
    for (const hook of stored.webhooks) {
      if (this.webhooks.some((w) => w.id === hook.id)) continue;
      this.webhooks.push(hook);
      await this.follow(hook.org);
    }
  }

  async create(org: string, input: WebhookInput): Promise<WebhookView & { secret: string }> {
    const fields = checkWebhookInput(input);
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
    // In memory before the write, so that entries committed meanwhile are delivered to it too.
    this.webhooks.push(record);
    try {
      await this.store.createWebhook(record);
    } catch (err) {
      // Not stored (a full disk, the database unreachable), so not made: nothing is delivered to it.
      this.forget(record);
      throw err;
    }
    return { ...view(record), secret: record.secret };
  }

  list(org: string): WebhookView[] {
    return this.webhooks.filter((w) => w.org === org).map(view);
  }

  /**
   * Removes a webhook and its deliveries (pending ones are not attempted again), once the store holds that: a
   * removal that cannot be stored (a full disk, the database unreachable) leaves it delivering, here as after a
   * restart, and its caller hears so.
   */
  async remove(org: string, id: string): Promise<WebhookView> {
    const record = this.find(org, id);
    await this.store.removeWebhook(org, id);
    this.forget(record);
    return view(record);
  }

  /** Stops delivering to a webhook and drops its deliveries held here; the store is the caller's to change. */
  private forget(record: WebhookRecord): void {
    const at = this.webhooks.indexOf(record);
    if (at >= 0) this.webhooks.splice(at, 1);
    for (const delivery of this.log.removeWebhook(record.id)) this.dispatcher.cancel(delivery);
    this.dispatcher.forgetWebhook(record.id);
    this.backlog.removeWebhook(record.id);
  }

  /** The deliveries of a webhook this instance holds, newest first: every pending one and the last 100 finished. */
  deliveriesHeld(org: string, id: string): DeliveryView[] {
    this.find(org, id);
    return this.log.of(id);
  }

  /**
   * The delivery log of a webhook, newest first: every pending delivery and the last 100 finished, those made
   * by other instances sharing the state included (what this one holds is the newer word on its own).
   */
  async deliveriesOf(org: string, id: string): Promise<DeliveryView[]> {
    this.find(org, id);
    const mine = new Map(this.log.records.filter((d) => d.webhookId === id).map((d) => [d.id, d]));
    const stored = (await this.store.read()).deliveries.filter((d) => d.webhookId === id);
    const merged = stored.map((d) => {
      const held = mine.get(d.id);
      // Held here as pending while another instance made the attempt and recorded how it ended: its word is
      // final, and this one stops waiting for that attempt's lease to run out.
      if (held?.status === 'pending' && d.status !== 'pending' && !this.dispatcher.busy(held)) this.takeOutcome(held, d);
      return held ?? d;
    });
    const kept = new Set(stored.map((d) => d.id));
    for (const d of mine.values()) if (!kept.has(d.id)) merged.push(d);
    merged.sort((x, y) => x.createdAt.localeCompare(y.createdAt));
    return new DeliveryLog(merged).of(id);
  }

  /** For /metrics: pending deliveries per organisation, and what full backlogs dropped since the start. */
  deliveryCounts(): {
    pending: Array<{ org: string; count: number }>;
    dropped: Iterable<{ org: string; limit: DropLimit; count: number }>;
  } {
    const pending = new Map<string, number>();
    for (const hook of this.webhooks) pending.set(hook.org, (pending.get(hook.org) ?? 0) + this.backlog.count(hook.id));
    return { pending: [...pending].map(([org, count]) => ({ org, count })), dropped: this.drops.totals() };
  }

  /**
   * Finds, from every active flag's health now, the flags that became stale (rolled out: `flag_stale`) or
   * passed their expiry (`flag_expired`) since the last check, and makes one delivery of each to the
   * organisation's webhooks asking for it. What was told is kept as a position in the state (a map of flag to
   * what it was told), moved with the deliveries at once: once per transition, across restarts, and once
   * between instances sharing the state. A flag that stops being stale is forgotten, so becoming stale again
   * is told again. The first check of an organisation only records where things are.
   */
  async recordFlagHealth(org: string, flags: readonly FlagHealthNow[]): Promise<void> {
    const key = `${FLAG_HEALTH_POSITION}${org}`;
    const marks: Record<string, string> = {};
    const byId = new Map<string, FlagHealthNow>();
    for (const flag of flags) {
      const id = `${flag.projectSlug}/${flag.key}`;
      const mark = healthMark(flag);
      if (mark !== '') marks[id] = mark;
      byId.set(id, flag);
    }
    const cursor = JSON.stringify(marks);
    for (let attempt = 0; attempt < 5 && !this.closed; attempt++) {
      const from = this.cursors[key];
      if (from === cursor) return;
      const told: Record<string, string> = from === undefined ? marks : parseMarks(from);
      const created: DeliveryRecord[] = [];
      const at = this.now().toISOString();
      for (const [id, mark] of Object.entries(marks)) {
        const before = told[id] ?? '';
        for (const [letter, action] of HEALTH_EVENTS) {
          if (!mark.includes(letter) || before.includes(letter)) continue;
          const flag = byId.get(id)!;
          const entry = {
            id: `health_${randomBytes(9).toString('base64url')}`,
            at,
            action,
            projectSlug: flag.projectSlug,
            flagKey: flag.key,
            environment: null,
            actor: { type: 'flagops', name: 'flag health' },
            status: flag.status,
            reasons: flag.reasons,
          } as unknown as AuditEntry;
          for (const hook of this.webhooks) {
            if (hook.org !== org || (hook.actions.length > 0 && !hook.actions.includes(action))) continue;
            created.push({
              id: `dlv_${randomBytes(9).toString('base64url')}`,
              webhookId: hook.id,
              auditId: entry.id,
              action,
              entry,
              status: 'pending',
              attempts: 0,
              createdAt: at,
              nextAttemptAt: this.now().getTime(),
            });
          }
        }
      }
      if (await this.store.advance(key, from, cursor, { added: created })) {
        this.cursors[key] = cursor;
        this.log.add(created);
        const dropped = this.enqueue(created);
        if (dropped.length > 0) await this.store.updateDeliveries({ changed: dropped, removed: this.log.prune() }, 'now');
        return;
      }
      // Another instance told first: take its position (and its deliveries) and compare again.
      const stored = await this.store.read();
      if (stored.cursors[key] === undefined) delete this.cursors[key];
      else this.cursors[key] = stored.cursors[key];
      const known = new Set(this.log.records.map((d) => d.id));
      const hooks = new Set(this.webhooks.filter((w) => w.org === org).map((w) => w.id));
      const adopted = stored.deliveries.filter((d) => d.status === 'pending' && hooks.has(d.webhookId) && !known.has(d.id));
      this.log.add(adopted);
      this.enqueue(adopted);
    }
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

  /**
   * Stops attempting (pending deliveries stay pending on disk for the next start; attempts under way are cut
   * and made again then) and finishes writing.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.stopHearing();
    for (const { timer } of this.failingReads.values()) clearTimeout(timer);
    this.failingReads.clear();
    for (const off of this.followed.values()) off();
    this.followed.clear();
    this.dispatcher.close();
    this.sender.close();
    this.drops.close();
    await Promise.all([...this.catchUps.values()].map((c) => c.running.catch(() => undefined)));
    await this.store.flush().catch((err) => this.writeFailed(err));
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
      repo.onMainMoved(() => this.readOn(org)),
    );
    await this.catchUp(org);
  }

  /** Turns `org`'s new entries into deliveries, for nobody waiting on it; one that fails is retried (readFailed). */
  private readOn(org: string): void {
    if (this.closed) return;
    const failing = this.failingReads.get(org);
    if (failing) clearTimeout(failing.timer); // read now rather than then; a failure sets the next wait
    const read = this.followed.has(org) ? this.catchUp(org) : this.follow(org);
    read.then(
      () => {
        const failed = this.failingReads.get(org);
        if (!failed) return;
        clearTimeout(failed.timer);
        this.failingReads.delete(org);
        this.logger.info('webhooks: reading the audit trail again', { org });
      },
      (err) => this.readFailed(org, err),
    );
  }

  /**
   * Reading `org`'s trail failed: read again after a wait that doubles with each failure, logged once until a
   * read succeeds, so the entries committed meanwhile are delivered even when main does not move again.
   */
  private readFailed(org: string, err: unknown): void {
    if (this.closed) return;
    const failing = this.failingReads.get(org);
    if (!failing) this.logger.error('webhooks: reading the audit trail failed; reading it again until it succeeds', { org, err });
    else clearTimeout(failing.timer);
    const delayMs = failing ? Math.min(failing.delayMs * 2, READ_RETRY_LAST_MS) : READ_RETRY_FIRST_MS;
    const timer = setTimeout(() => this.readOn(org), delayMs);
    timer.unref();
    this.failingReads.set(org, { timer, delayMs });
  }

  /** Turns the entries after the organisation's cursor into deliveries, written before any is attempted. */
  private async readNewEntries(org: string): Promise<void> {
    const index = await this.options.audit.get(org);
    await index.caughtUp();
    const cursor = this.cursors[org];
    // Another instance sharing the state moved the position to a commit this one has not fetched yet: its main
    // is behind, not rewritten. Read on once it has that commit (the fetch moves main, which calls this again);
    // reading now would move the shared position back and deliver again what was delivered.
    if (cursor && !(await this.hasCommit(org, cursor))) return;
    let { newest, entries, skipped, gone } = await entriesSince(index, cursor, CATCH_UP_LIMIT);
    // Main was rebuilt under the position (held kills made again on the git host's newer head, where an earlier
    // version, which delivered held kills at once, left the position on one): read on from where the lines part.
    if (gone && cursor)
      ({ newest, entries, skipped } = await entriesAfterRebuild(index, await this.options.repos.get(org), cursor, CATCH_UP_LIMIT));
    // Asked after reading: main moves onto a held kill only once it is held, so what was read is on the remote.
    if (this.options.heldBack?.holding(org)) return;
    if (cursor === undefined) {
      // First use in this organisation: deliveries start after what is on main now.
      if (await this.store.advance(org, undefined, newest, {})) this.cursors[org] = newest;
      else await this.adoptStored(org);
      return;
    }
    if (newest === cursor) return;
    if (skipped) this.logger.warn(`webhooks: ${skipped}; those entries are not delivered, deliveries continue from main's head`, { org });
    const created: DeliveryRecord[] = [];
    const at = this.now().toISOString();
    for (const entry of entries) {
      for (const hook of this.webhooks) {
        if (hook.org !== org || (hook.actions.length > 0 && !hook.actions.includes(entry.action))) continue;
        created.push({
          id: `dlv_${randomBytes(9).toString('base64url')}`,
          webhookId: hook.id,
          auditId: entry.id,
          action: entry.action,
          entry,
          status: 'pending',
          attempts: 0,
          createdAt: at,
          nextAttemptAt: this.now().getTime(),
        });
      }
    }
    // Another instance sharing the state moved the position first and made these deliveries: take its.
    if (!(await this.store.advance(org, cursor, newest, { added: created }))) return this.adoptStored(org);
    this.log.add(created);
    this.cursors[org] = newest;
    // What a bound drops is recorded right after; a crash in between leaves it pending, and open() drops it again.
    const dropped = this.enqueue(created);
    if (dropped.length > 0) await this.store.updateDeliveries({ changed: dropped, removed: this.log.prune() }, 'now');
  }

  private async hasCommit(org: string, oid: string): Promise<boolean> {
    const repo = await this.options.repos.get(org);
    return repo.readCommit(oid).then(
      () => true,
      () => false,
    );
  }

  /**
   * Takes what another instance sharing the state recorded: the organisation's position, its webhooks and the
   * pending deliveries this one does not hold (each attempt is claimed, so holding them here makes none twice,
   * and they are made should that instance stop). Then reads on from that position.
   */
  private async adoptStored(org: string): Promise<void> {
    const stored = await this.store.read();
    for (const hook of stored.webhooks) if (!this.webhooks.some((w) => w.id === hook.id)) this.webhooks.push(hook);
    const known = new Set(this.log.records.map((d) => d.id));
    const hooks = new Set(this.webhooks.filter((w) => w.org === org).map((w) => w.id));
    const adopted = stored.deliveries.filter((d) => d.status === 'pending' && hooks.has(d.webhookId) && !known.has(d.id));
    this.log.add(adopted);
    const dropped = this.enqueue(adopted);
    if (dropped.length > 0) await this.store.updateDeliveries({ changed: dropped, removed: this.log.prune() }, 'now');
    const moved = stored.cursors[org] !== this.cursors[org];
    this.cursors[org] = stored.cursors[org];
    if (moved) await this.readNewEntries(org);
  }

  /**
   * Counts pending deliveries into the backlog, oldest first, marking failed what it drops, and schedules those
   * left. Returns those dropped.
   */
  private enqueue(deliveries: DeliveryRecord[]): DeliveryRecord[] {
    const drops = new Map<string, { webhook: string; limit: DropLimit; count: number }>();
    const dropped: DeliveryRecord[] = [];
    for (const delivery of deliveries) {
      for (const { delivery: d, limit } of this.backlog.add(delivery)) {
        dropped.push(d);
        this.dispatcher.cancel(d);
        d.status = 'failed';
        d.lastError = `dropped before it could be delivered: ${this.dropReason(limit)}`;
        this.finish(d);
        const key = `${d.webhookId}\u0000${limit}`;
        const noted = drops.get(key) ?? { webhook: d.webhookId, limit, count: 0 };
        noted.count++;
        drops.set(key, noted);
      }
    }
    for (const { webhook, limit, count } of drops.values()) {
      const org = this.webhooks.find((w) => w.id === webhook)?.org ?? '';
      this.drops.note(webhook, org, limit, count);
    }
    for (const delivery of deliveries) if (delivery.status === 'pending') this.dispatcher.schedule(delivery);
    return dropped;
  }

  private dropReason(limit: DropLimit): string {
    return limit === 'per_webhook'
      ? `${this.limits.pendingPerWebhook.toLocaleString('en-US')} deliveries were already waiting for this webhook`
      : `the deliveries waiting for all webhooks reached ${bytes(this.limits.pendingBytes)}`;
  }

  private async attempt(delivery: DeliveryRecord): Promise<void> {
    const hook = this.webhooks.find((w) => w.id === delivery.webhookId);
    if (!hook || !delivery.entry || delivery.status !== 'pending') return; // removed or dropped meanwhile
    if (!(await this.claim(delivery))) return;
    const event = (FLAG_HEALTH_ACTIONS as readonly string[]).includes(delivery.action) ? 'flag_health' : 'audit';
    const body = JSON.stringify({ event, entry: delivery.entry });
    const headers = { [SIGNATURE_HEADER]: signature(hook.secret, body), 'X-Flagops-Delivery': delivery.id, 'X-Flagops-Event': event };
    const outcome = await this.sender.send(hook.url, body, headers, this.retry.timeoutMs);
    // Stopped meanwhile: what was on disk stands, and the next start attempts it again.
    if (this.closed || !this.backlog.has(delivery)) return;
    this.dispatcher.receiverAnswered(hook.id, outcome.ok);
    delivery.attempts++;
    if (outcome.ok) {
      delivery.status = 'delivered';
      delivery.deliveredAt = this.now().toISOString();
      delete delivery.lastError;
      this.finish(delivery);
    } else {
      delivery.lastError = outcome.error;
      if (delivery.attempts >= this.retry.attempts) {
        delivery.status = 'failed';
        this.finish(delivery);
        this.logger.warn('webhook delivery failed; no more attempts', {
          webhook: hook.id,
          auditId: delivery.auditId,
          error: outcome.error,
        });
      } else {
        delivery.nextAttemptAt = this.now().getTime() + backoffMs(delivery.attempts, this.retry.baseDelayMs, this.retry.maxDelayMs);
        this.dispatcher.schedule(delivery);
      }
    }
    // An outcome lost in a crash only repeats the attempt: written within the second, with whatever else changed.
    this.lazily(this.store.updateDeliveries({ changed: [delivery], removed: this.log.prune() }, 'soon'));
  }

  /**
   * Whether this instance makes the attempt now: the store hands each attempt to one instance sharing it. When
   * another holds it, or finished it, or the state cannot be reached, the delivery is left as that says.
   */
  private async claim(delivery: DeliveryRecord): Promise<boolean> {
    const now = this.now().getTime();
    let claim: AttemptClaim;
    try {
      claim = await this.store.claimAttempt(delivery.id, now, now + this.retry.timeoutMs + LEASE_MARGIN_MS);
    } catch (err) {
      this.writeFailed(err);
      delivery.nextAttemptAt = now + this.retry.baseDelayMs;
      this.dispatcher.schedule(delivery);
      return false;
    }
    const current = claim.current;
    if (claim.claimed && current) {
      delivery.attempts = current.attempts;
      return true;
    }
    if (this.closed || !this.backlog.has(delivery)) return false;
    if (!current) {
      this.backlog.remove(delivery); // its webhook was removed through another instance
    } else if (current.status !== 'pending') {
      this.takeOutcome(delivery, current);
    } else {
      delivery.attempts = current.attempts;
      delivery.nextAttemptAt = Math.max(current.nextAttemptAt ?? 0, claim.takenUntil ?? 0);
      this.dispatcher.schedule(delivery);
    }
    return false;
  }

  /** A write nobody waits for: its failure is logged once, however many changes it carried. */
  private lazily(write: Promise<void>): void {
    if (this.watchedWrites.has(write)) return;
    this.watchedWrites.add(write);
    write.catch((err) => this.writeFailed(err));
  }

  private writeFailed(err: unknown): void {
    this.logger.error('webhooks: writing the delivery log failed', { err });
  }

  /** Another instance finished this delivery: it is not attempted here again, and shows as that one recorded. */
  private takeOutcome(delivery: DeliveryRecord, finished: DeliveryRecord): void {
    this.dispatcher.cancel(delivery);
    Object.assign(delivery, finished);
    this.finish(delivery);
  }

  /** A delivery is done (delivered, failed, dropped): out of the backlog, and its entry no longer kept. */
  private finish(delivery: DeliveryRecord): void {
    this.backlog.remove(delivery);
    delete delivery.entry;
    delete delivery.nextAttemptAt;
    this.log.countFinished(delivery.webhookId);
  }
}

function bytes(n: number): string {
  if (n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n.toLocaleString('en-US')} bytes`;
}

function view(record: WebhookRecord): WebhookView {
  return { id: record.id, url: record.url, actions: record.actions, createdAt: record.createdAt };
}
