import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AUDIT_ACTIONS, type AuditEntry, isEnvironmentName } from '@flagops/core';
import { freezeEntry } from './commit-entries.js';
import { EntryLog } from './entry-log.js';

/**
 * The index on disk, so a restart reads only the commits made since it was written instead of the whole log.
 * It is only a cache: the entries of a commit follow from the commit, so a missing, unreadable or outdated
 * file just means reading more of the log. Bump FORMAT whenever the rules that describe a commit change.
 */
const FORMAT = 3;

interface CacheFile {
  format: number;
  /** Oldest first: [commit, its entries in its own order]. */
  commits: Array<[string, AuditEntry[]]>;
}

export async function readIndexCache(file: string): Promise<EntryLog | null> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return null;
  }
  const cache = parsed as Partial<CacheFile> | null;
  if (cache?.format !== FORMAT || !Array.isArray(cache.commits)) return null;
  const log = new EntryLog();
  for (const item of cache.commits) {
    if (!Array.isArray(item) || typeof item[0] !== 'string' || !Array.isArray(item[1])) return null;
    const [oid, entries] = item as [string, unknown[]];
    if (!entries.every((entry) => isEntryOf(oid, entry))) return null;
    log.append(oid, (entries as AuditEntry[]).map(freezeEntry));
  }
  return log;
}

/** Written to a temp file and renamed, so a crash leaves the previous cache or none, never half a file. */
export async function writeIndexCache(file: string, log: EntryLog): Promise<void> {
  const cache: CacheFile = { format: FORMAT, commits: log.commitsOldestFirst().map(([oid, entries]) => [oid, [...entries]]) };
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, JSON.stringify(cache), { mode: 0o600 });
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

const nullableString = (value: unknown) => value === null || typeof value === 'string';

function isEntryOf(oid: string, value: unknown): boolean {
  const entry = value as Partial<AuditEntry> | null;
  return (
    entry !== null &&
    typeof entry === 'object' &&
    entry.id === oid &&
    typeof entry.at === 'string' &&
    (AUDIT_ACTIONS as readonly unknown[]).includes(entry.action) &&
    nullableString(entry.projectSlug) &&
    nullableString(entry.flagKey) &&
    (entry.environment === null || isEnvironmentName(entry.environment)) &&
    typeof entry.actor === 'object' &&
    entry.actor !== null &&
    typeof entry.actor.type === 'string'
  );
}
