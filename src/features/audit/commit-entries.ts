import type { AuditEntry, Pusher } from '@flagops/core';
import type { CommitInfo, FlagopsTrailers } from '../../foundations/storage/index.js';
import { type DerivedChange, type DiffReader, describeDiff } from './diff-entries.js';

/** What the index knows about a commit beyond the commit itself. */
export interface CommitContext {
  /** The commit is older than commit signing (CommitTrustStore): its unsigned trailers are believed. */
  trustUnsigned?: boolean;
  /** The key that pushed it over git over HTTP (PushLog in src/foundations/state). */
  pushedBy?: Pusher;
}

/**
 * The audit entries of one commit on main's first-parent line: one from its trailers when the control plane
 * made it (its signature proves it), else one per (project, flag, environment) its diff changed, attributed
 * to its git author, with the key that pushed it when it came over git over HTTP. Trailers without a valid
 * signature are not believed: anyone can write them. An import (`flagops import`, trailer action `import`)
 * changes many flags at once, so it too is described from its diff, one entry per flag with the action the
 * change was, attributed to the importer its trailers name. A merge commit is its diff against the first
 * parent, attributed to whoever made the merge. A commit that changed nothing under projects/ still gets one
 * `change` entry, so that every commit on main is in the trail. Entries are frozen: the index hands the
 * same objects to every reader.
 */
export async function describeCommit(commit: CommitInfo, reader: DiffReader, context: CommitContext = {}): Promise<readonly AuditEntry[]> {
  const trailers = commit.flagops ?? (context.trustUnsigned ? commit.unsignedFlagops : null);
  if (trailers && trailers.action !== 'import') {
    const entry = entryFromTrailers(commit, trailers);
    // A proposal's own commit that a push fast-forwarded main to: the key that pushed it decided the proposal.
    if (context.pushedBy) entry.pushedBy = { ...context.pushedBy };
    return [freezeEntry(entry)];
  }
  const changes = await describeDiff(commit.oid, reader);
  if (changes.length === 0) changes.push({ action: 'change', projectSlug: null, flagKey: null, environment: null });
  const reason = commitReason(commit);
  const actor = trailers ? entryFromTrailers(commit, trailers).actor : { type: 'git' as const, name: commit.author.name };
  return changes.map((change) => freezeEntry(gitEntry(commit, change, reason, actor, context.pushedBy)));
}

function gitEntry(
  commit: CommitInfo,
  change: DerivedChange,
  commitReason: string | undefined,
  actor: AuditEntry['actor'],
  pushedBy: Pusher | undefined,
): AuditEntry {
  const entry: AuditEntry = {
    id: commit.oid,
    at: isoTime(commit.author.timestamp),
    action: change.action,
    projectSlug: change.projectSlug,
    flagKey: change.flagKey,
    environment: change.environment,
    actor: { ...actor },
  };
  if (change.segmentKey) entry.segmentKey = change.segmentKey;
  if (pushedBy) entry.pushedBy = { ...pushedBy };
  if (commit.summary) entry.message = commit.summary;
  // The kill's own entry in kills.yaml says why more precisely than the commit message.
  const reason = change.reason ?? commitReason;
  if (reason) entry.reason = reason;
  return entry;
}

/** Entries are shared by every reader of the index (and the cache), so nobody may change one. */
export function freezeEntry(entry: AuditEntry): AuditEntry {
  Object.freeze(entry.actor);
  if (entry.pushedBy) Object.freeze(entry.pushedBy);
  if (entry.proposedBy) Object.freeze(entry.proposedBy);
  return Object.freeze(entry);
}

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
  if (trailers.actor.role) actor.role = trailers.actor.role;
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
  if (trailers.segment) entry.segmentKey = trailers.segment;
  if (trailers.proposalId) entry.proposalId = trailers.proposalId;
  if (trailers.proposedBy) entry.proposedBy = { ...trailers.proposedBy };
  if (trailers.madeFrom) entry.madeFrom = trailers.madeFrom;
  if (commit.summary) entry.message = commit.summary;
  const reason = commitReason(commit);
  if (reason) entry.reason = reason;
  return entry;
}

const REASON_LINE = /^reason:[ \t]*/i;

/**
 * The reason a commit gives for itself: a paragraph of the body that starts with `reason:` (how the kill
 * switch writes it, docs/architecture.md; the body this service writes is one paragraph, whatever blank lines
 * the reason has), or a `reason:` trailer. An engineer who writes only `kill x\n\nreason: broken` gets a last
 * paragraph that git reads as a trailer, hence the second place.
 */
export function commitReason(commit: Pick<CommitInfo, 'bodyParagraphs' | 'trailers'>): string | undefined {
  for (const paragraph of commit.bodyParagraphs) {
    if (REASON_LINE.test(paragraph)) {
      const text = paragraph.replace(REASON_LINE, '').trim();
      if (text !== '') return text;
    }
  }
  for (let i = commit.trailers.length - 1; i >= 0; i--) {
    const trailer = commit.trailers[i];
    if (trailer.key.toLowerCase() === 'reason' && trailer.value !== '') return trailer.value;
  }
  return undefined;
}
