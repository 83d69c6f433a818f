import type { AuditEntry } from '@flagops/core';
import type { CommitInfo, FlagopsTrailers } from '../storage/index.js';
import { commitReason } from './commit-reason.js';

/** The ISO-8601 instant of a git identity's timestamp (seconds since the epoch). */
export function isoTime(timestamp: number): string {
  return new Date(timestamp * 1000).toISOString();
}

/**
 * A commit the control plane made: its `Flagops-*` trailers say what it was, so it is one entry and its diff
 * is not read. The actor's name falls back to the git author, which the store sets from the same actor.
 */
export function entryFromTrailers(commit: CommitInfo, trailers: FlagopsTrailers): AuditEntry {
  const actor: AuditEntry['actor'] = { type: trailers.actor.type, name: trailers.actor.name ?? commit.author.name };
  if (trailers.actor.keyPrefix) actor.keyPrefix = trailers.actor.keyPrefix;
  const entry: AuditEntry = {
    id: commit.oid,
    at: isoTime(commit.author.timestamp),
    action: trailers.action,
    projectSlug: trailers.project ?? null,
    flagKey: trailers.flag ?? null,
    environment: trailers.environment ?? null,
    actor,
  };
  if (trailers.fromEnvironment) entry.fromEnvironment = trailers.fromEnvironment;
  if (commit.summary) entry.message = commit.summary;
  const reason = commitReason(commit);
  if (reason) entry.reason = reason;
  return entry;
}
