import pg from 'pg';
import type { Logger } from '../../log/logger.js';
import type { Unsubscribe } from '../unsubscribe.js';
import { CHANGES_CHANNEL, type ChangeKind } from './database.js';

/** The channel of `{ from, topic, payload }` payloads: notices one instance publishes to the others. */
export const NOTICES_CHANNEL = 'flagops_notices';

const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 5_000;

/**
 * What the other instances announce, heard on one connection of its own that LISTENs (a pooled connection
 * would stop listening when handed back). When that connection drops it is made again, waiting longer after
 * each failure; once it is back, every listener is called once, since announcements made meanwhile were lost.
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
      await client.query(`LISTEN ${CHANGES_CHANNEL}; LISTEN ${NOTICES_CHANNEL}`);
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
  }

  private dropped(client: pg.Client, err: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    this.lostBecause = err;
    client.end().catch(() => undefined);
    this.logger.warn('state: the connection listening to the database dropped; reconnecting', { err: err.message });
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
