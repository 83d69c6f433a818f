import type { Pusher } from '@flagops/core';
import type { PushLog, PushReader, PushRecord } from '../push-log.js';
import type { Database } from './database.js';
import { PG_HOOK_TARGET } from './hook-target-prefix.js';

/**
 * Pushers in flagops_pushes, in the order recorded. The pre-receive hook, a process of its own, records through
 * a connection of its own (appendHookPushes), told where by hookTarget: `postgres:` and `{ url, org }`.
 */
export class PgPushLog implements PushLog {
  constructor(
    private readonly db: Database,
    private readonly url: string,
  ) {}

  async append(org: string, records: readonly PushRecord[]): Promise<void> {
    if (records.length === 0) return;
    await insertPushes((text, values) => this.db.query(text, values), org, records);
  }

  reader(org: string): PushReader {
    return new PgPushReader(this.db, org);
  }

  /** Carries the connection string (with its password) to git's child process only, in its environment, never in logs. */
  hookTarget(org: string): string {
    return `${PG_HOOK_TARGET}${JSON.stringify({ url: this.url, org })}`;
  }
}

/** One statement, so all of the records or none; `run` runs it on a pool or on a connection of its own. */
export async function insertPushes(
  run: (text: string, values: unknown[]) => Promise<unknown>,
  org: string,
  records: readonly PushRecord[],
): Promise<void> {
  await run('INSERT INTO flagops_pushes (org, record) SELECT $1, r FROM unnest($2::jsonb[]) AS r', [
    org,
    records.map((r) => JSON.stringify(r)),
  ]);
}

class PgPushReader implements PushReader {
  private readonly pushers = new Map<string, Pusher>();
  private readonly times = new Map<string, string>();
  private position = '0';

  constructor(
    private readonly db: Database,
    private readonly org: string,
  ) {}

  async refresh(): Promise<void> {
    const { rows } = await this.db.query<{ position: string; record: PushRecord }>(
      'SELECT position, record FROM flagops_pushes WHERE org = $1 AND position > $2 ORDER BY position',
      [this.org, this.position],
    );
    for (const { position, record } of rows) {
      this.position = position;
      const by = record.pushedBy;
      this.pushers.set(record.commit, Object.freeze({ type: by.type, keyPrefix: by.keyPrefix, ...(by.name ? { name: by.name } : {}) }));
      if (typeof record.at === 'string') this.times.set(record.commit, record.at);
      else this.times.delete(record.commit);
    }
  }

  pusherOf(commit: string): Pusher | undefined {
    return this.pushers.get(commit);
  }

  pushedAt(commit: string): string | undefined {
    return this.times.get(commit);
  }
}
