import { mkdir, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Pusher } from '@flagops/core';
import { appendFileSynced, stateWriteFault } from '../../state-files/state-files.js';
import type { PushLog, PushReader, PushRecord } from '../push-log.js';

/**
 * The push log as files: one JSON line per commit, `{ commit, pushedBy, at }`, in `<pushesDir>/<org>.jsonl`
 * (`<dataDir>/state/pushes`). A commit recorded twice (a push git accepted but could not apply, then pushed
 * again) belongs to the last record. Commits that arrived otherwise have none.
 */
export class FilePushLog implements PushLog {
  constructor(private readonly dir: string) {}

  append(org: string, records: readonly PushRecord[]): Promise<void> {
    return appendPushRecords(this.hookTarget(org), records);
  }

  reader(org: string): PushReader {
    return new FilePushReader(this.hookTarget(org));
  }

  /** The organisation's file; `org` is a checked organisation name. */
  hookTarget(org: string): string {
    return join(this.dir, `${org}.jsonl`);
  }
}

const OID = /^[0-9a-f]{40}$/;

/** Appends the records and fsyncs them: once this resolves, a crash cannot lose them. */
export async function appendPushRecords(file: string, records: readonly PushRecord[]): Promise<void> {
  if (records.length === 0) return;
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  } catch (err) {
    throw stateWriteFault(file, err);
  }
  await appendFileSynced(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

/** The push log of one organisation, read once and then only what was appended since. */
export class FilePushReader implements PushReader {
  private readonly pushers = new Map<string, Pusher>();
  private readonly times = new Map<string, string>();
  private offset = 0;

  constructor(private readonly file: string) {}

  /** Reads the lines appended since the last call. A line cut short by a crash is skipped. */
  async refresh(): Promise<void> {
    const handle = await open(this.file, 'r').catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? null : Promise.reject(err)));
    if (handle === null) return;
    try {
      const { size } = await handle.stat();
      if (size <= this.offset) return;
      const buffer = Buffer.alloc(size - this.offset);
      await handle.read(buffer, 0, buffer.length, this.offset);
      const end = buffer.lastIndexOf(0x0a);
      if (end < 0) return;
      // Only whole lines: an append under way finishes its line later.
      this.offset += end + 1;
      for (const line of buffer.subarray(0, end).toString('utf8').split('\n')) this.take(line);
    } finally {
      await handle.close();
    }
  }

  pusherOf(commit: string): Pusher | undefined {
    return this.pushers.get(commit);
  }

  private take(line: string): void {
    let record: Partial<PushRecord> | null;
    try {
      record = JSON.parse(line) as Partial<PushRecord> | null;
    } catch {
      return;
    }
    const by = record?.pushedBy;
    if (typeof record?.commit !== 'string' || !OID.test(record.commit) || !isPusher(by)) return;
    this.pushers.set(record.commit, Object.freeze({ type: by.type, keyPrefix: by.keyPrefix, ...(by.name ? { name: by.name } : {}) }));
    if (typeof record.at === 'string') this.times.set(record.commit, record.at);
    else this.times.delete(record.commit);
  }

  pushedAt(commit: string): string | undefined {
    return this.times.get(commit);
  }
}

function isPusher(value: unknown): value is Pusher {
  const by = value as Partial<Pusher> | null;
  return (
    typeof by === 'object' &&
    by !== null &&
    (by.type === 'admin' || by.type === 'agent') &&
    typeof by.keyPrefix === 'string' &&
    (by.name === undefined || typeof by.name === 'string')
  );
}
