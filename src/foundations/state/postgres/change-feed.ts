import pg from 'pg';
import type { Logger } from '../../log/logger.js';
import type { Unsubscribe } from '../unsubscribe.js';
import { answeredWithin, CHANGES_CHANNEL, type ChangeKind, DATABASE_ANSWER_MS } from './database.js';

/** The channel of `{ from, topic, payload }` payloads: notices one instance publishes to the others. */
export const NOTICES_CHANNEL = 'flagops_notices';

const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 5_000;
/**
 * How often the listening connection asks the database to answer, and how long it waits: a database that hangs
 * (stopped, a machine that froze) keeps the connection open and silent, which would otherwise never be noticed,
 * and the others' announcements would be missed unknown to anyone.
 */
const HEARTBEAT_MS = 500;
const HEARTBEAT_ANSWER_MS = 1_000;

/**
 * What the other instances announce, heard on one connection of its own that LISTENs (a pooled connection
 * would stop listening when handed back). When that connection drops, or the database leaves it unanswered for
 * HEARTBEAT_ANSWER_MS, it is ended and made again, waiting longer after each failure; once it is back, every
 * listener is called once, since announcements made meanwhile were lost.
 */
export class ChangeFeed {
  private readonly changeListeners = new Map<ChangeKind, Set<() => void>>();
  private readonly noticeListeners = new Map<string, Set<(payload: string) => void>>();
  private readonly resyncListeners = new Set<() => void>();
  private client: pg.Client | null = null;
  /** Why the listening connection is down, while it is: the database cannot be reached. */
  private lostBecause: Error | null = null;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly instanceId: string,
    private readonly logger: Logger,
  ) {}

  /** Starts listening; rejects when the database cannot be reached now. */
  async start(): Promise<void> {
    await this.connect();
  }

  /** Why the database cannot be reached, as far as the listening connection tells; null while it listens. */
  lost(): Error | null {
    return this.lostBecause;
  }

  onChange(kind: ChangeKind, listener: () => void): Unsubscribe {
    return add(this.changeListeners, kind, listener);
  }

  onNotice(topic: string, listener: (payload: string) => void): Unsubscribe {
    return add(this.noticeListeners, topic, listener);
  }

  onResync(listener: () => void): Unsubscribe {
    this.resyncListeners.add(listener);
    return () => this.resyncListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.heartbeatTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ ...this.config, keepAlive: true });
    client.on('notification', (message) => this.heard(message));
    client.on('error', (err) => this.dropped(client, err));
    client.on('end', () => this.dropped(client, new Error('the connection ended')));
    try {
      await client.connect();
      await answeredWithin(client.query(`LISTEN ${CHANGES_CHANNEL}; LISTEN ${NOTICES_CHANNEL}`), DATABASE_ANSWER_MS);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.heartbeat(client);
  }

  /** Asks `client` to answer every HEARTBEAT_MS while it listens; one left unanswered counts as the connection dropped. */
  private heartbeat(client: pg.Client): void {
    const ask = () => {
      if (this.client !== client) return;
      answeredWithin(client.query('SELECT 1'), HEARTBEAT_ANSWER_MS).then(
        () => {
          if (this.client !== client) return;
          this.heartbeatTimer = setTimeout(ask, HEARTBEAT_MS);
          this.heartbeatTimer.unref();
        },
        (err: Error) => this.dropped(client, err),
      );
    };
    this.heartbeatTimer = setTimeout(ask, HEARTBEAT_MS);
    this.heartbeatTimer.unref();
  }

  private dropped(client: pg.Client, err: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    this.lostBecause = err;
    clearTimeout(this.heartbeatTimer);
    // With a question unanswered, ending destroys the socket rather than wait for a database that hangs.
    client.end().catch(() => undefined);
    this.logger.warn('state: the connection listening to the database dropped or stopped answering; reconnecting', { err: err.message });
    this.retry();
  }

  private retry(): void {
    this.retryTimer = setTimeout(async () => {
      try {
        await this.connect();
      } catch {
        this.retryMs = Math.min(this.retryMs * 2, LAST_RETRY_MS);
        if (!this.closed) this.retry();
        return;
      }
      this.retryMs = FIRST_RETRY_MS;
      this.lostBecause = null;
      if (this.closed) return;
      this.logger.info('state: listening to the database again; reading the state again');
      this.resync();
    }, this.retryMs);
    this.retryTimer.unref();
  }

  private resync(): void {
    for (const listeners of this.changeListeners.values()) for (const listener of [...listeners]) this.call(listener);
    for (const listener of [...this.resyncListeners]) this.call(listener);
  }

  private heard(message: pg.Notification): void {
    let parsed: { from?: unknown; kind?: unknown; topic?: unknown; payload?: unknown };
    try {
      parsed = JSON.parse(message.payload ?? '');
    } catch {
      return;
    }
    if (parsed.from === this.instanceId) return;
    if (message.channel === CHANGES_CHANNEL) {
      for (const listener of [...(this.changeListeners.get(parsed.kind as ChangeKind) ?? [])]) this.call(listener);
    } else if (message.channel === NOTICES_CHANNEL && typeof parsed.topic === 'string' && typeof parsed.payload === 'string') {
      const payload = parsed.payload;
      for (const listener of [...(this.noticeListeners.get(parsed.topic) ?? [])]) this.call(() => listener(payload));
    }
  }

  /** A listener that throws must not keep the others from hearing. */
  private call(listener: () => void): void {
    try {
      listener();
    } catch (err) {
      this.logger.error('state: a listener of changes from other instances failed', { err });
    }
  }
}

function add<K, L>(map: Map<K, Set<L>>, key: K, listener: L): Unsubscribe {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(listener);
  return () => {
    map.get(key)?.delete(listener);
  };
}
