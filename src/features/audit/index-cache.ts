import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { AUDIT_ACTIONS, type AuditEntry, isEnvironmentName } from '@flagops/core';
import type { Logger } from '../../foundations/log/logger.js';
import { freezeEntry } from './commit-entries.js';
import { EntryLog } from './entry-log.js';

/**
 * The index on disk, so a restart reads only the commits made since it was written instead of the whole log.
 * It is only a cache: the entries of a commit follow from the commit, so a missing, unreadable or outdated
 * file just means reading more of the log. Bump FORMAT whenever the rules that describe a commit change.
 *
 * A header line (format, checksum of the rest), then the commits as one JSON line. The checksum is what keeps
 * a damaged file from changing the trail: a flipped bit in an actor's name or a flag key still parses and
 * passes every shape check, yet the git log, which is the audit trail, says otherwise.
 */
const FORMAT = 4;

interface Header {
  format: number;
  /** CRC-32 of everything after the header's line. */
  crc32: number;
}

/** Oldest first: [commit, its entries in its own order]. */
type CachedCommits = Array<[string, AuditEntry[]]>;

/** The log the file holds, or null: none, another format's, or damaged (logged, as the log is read again then). */
export async function readIndexCache(file: string, logger: Logger): Promise<EntryLog | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return null; // none yet; one that cannot be written warns when it is
  }
  try {
    const newline = text.indexOf('\n');
    const header = JSON.parse(newline === -1 ? text : text.slice(0, newline)) as Partial<Header> | null;
    if (header?.format !== FORMAT) return null;
    const body = text.slice(newline + 1);
    if (newline === -1 || crc32(body) !== header.crc32) throw new Error('checksum mismatch');
    return entryLogOf(JSON.parse(body));
  } catch (err) {
    logger.warn('ignoring a damaged audit index cache; reading the log instead', { file, err });
    return null;
  }
}

function entryLogOf(commits: unknown): EntryLog {
  if (!Array.isArray(commits)) throw new Error('no list of commits');
  const log = new EntryLog();
  for (const item of commits) {
    if (!Array.isArray(item) || typeof item[0] !== 'string' || !Array.isArray(item[1]))
      throw new Error('a commit that is no [id, entries]');
    const [oid, entries] = item as [string, unknown[]];
    if (!entries.every((entry) => isEntryOf(oid, entry))) throw new Error(`an entry of ${oid} is not an audit entry of it`);
    log.append(oid, (entries as AuditEntry[]).map(freezeEntry));
  }
  return log;
}

/** Written to a temp file and renamed, so a crash leaves the previous cache or none, never half a file. */
export async function writeIndexCache(file: string, log: EntryLog): Promise<void> {
  const commits: CachedCommits = log.commitsOldestFirst().map(([oid, entries]) => [oid, [...entries]]);
  const body = JSON.stringify(commits);
  const header: Header = { format: FORMAT, crc32: crc32(body) };
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, `${JSON.stringify(header)}\n${body}`, { mode: 0o600 });
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
