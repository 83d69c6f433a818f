import type { AuditEntry } from '../model/index.js';
import type { CommitInfo } from '../storage/index.js';
import { commitReason } from './commit-reason.js';
import { type DerivedChange, type DiffReader, describeDiff } from './diff-entries.js';
import { entryFromTrailers, isoTime } from './trailer-entry.js';

/**
 * The audit entries of one commit on main's first-parent line: one from its trailers when the control plane
 * made it, else one per (project, flag, environment) its diff changed, attributed to its git author. An
 * import (`flagops import`, trailer action `import`) changes many flags at once, so it too is described from
 * its diff, one entry per flag with the action the change was, attributed to the importer its trailers name. A
 * merge commit is its diff against the first parent, attributed to whoever made the merge. A commit that
 * changed nothing under projects/ still gets one `change` entry, so that every commit on main is in the trail.
 * Entries are frozen: the index hands the same objects to every reader.
 */
export async function describeCommit(commit: CommitInfo, reader: DiffReader): Promise<readonly AuditEntry[]> {
  if (commit.flagops && commit.flagops.action !== 'import') return [freezeEntry(entryFromTrailers(commit, commit.flagops))];
  const changes = await describeDiff(commit.oid, reader);
  if (changes.length === 0) changes.push({ action: 'change', projectSlug: null, flagKey: null, environment: null });
  const reason = commitReason(commit);
  const actor = commit.flagops ? entryFromTrailers(commit, commit.flagops).actor : { type: 'git' as const, name: commit.author.name };
  return changes.map((change) => freezeEntry(gitEntry(commit, change, reason, actor)));
}

function gitEntry(commit: CommitInfo, change: DerivedChange, commitReason: string | undefined, actor: AuditEntry['actor']): AuditEntry {
  const entry: AuditEntry = {
    id: commit.oid,
    at: isoTime(commit.author.timestamp),
    action: change.action,
    projectSlug: change.projectSlug,
    flagKey: change.flagKey,
    environment: change.environment,
    actor: { ...actor },
  };
  if (commit.summary) entry.message = commit.summary;
  // The kill's own entry in kills.yaml says why more precisely than the commit message.
  const reason = change.reason ?? commitReason;
  if (reason) entry.reason = reason;
  return entry;
}

/** Entries are shared by every reader of the index (and the cache), so nobody may change one. */
export function freezeEntry(entry: AuditEntry): AuditEntry {
  Object.freeze(entry.actor);
  return Object.freeze(entry);
}
