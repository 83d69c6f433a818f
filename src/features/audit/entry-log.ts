import type { AuditEntry } from '@flagops/core';
import {
  type AuditPage,
  type AuditQuery,
  type CursorPosition,
  decodeCursor,
  encodeCursor,
  invalidCursor,
  matchesQuery,
} from './audit-query.js';

/**
 * The indexed trail of one first-parent history, in memory. Entries sit oldest first, so a new commit is an
 * append and a cursor's position never moves under it; pages are read backwards from the end (newest first).
 * A commit's entries are stored in reverse, so reading backwards gives them in their own order.
 */
export class EntryLog {
  private readonly entries: AuditEntry[] = [];
  /** Commit → index of its lowest slot in `entries`, and how many it has. */
  private readonly commits = new Map<string, { start: number; count: number }>();
  private lastCommit: string | null = null;
  /** Proposal id → the entry of the commit on main that applied it. */
  private readonly applied = new Map<string, AuditEntry>();

  /** The newest commit indexed, or null when empty. */
  get head(): string | null {
    return this.lastCommit;
  }

  get commitCount(): number {
    return this.commits.size;
  }

  get size(): number {
    return this.entries.length;
  }

  /** The entries of a commit already indexed, in its own order (reused when the index is rebuilt). */
  entriesOf(commit: string): readonly AuditEntry[] | undefined {
    const at = this.commits.get(commit);
    return at && this.entries.slice(at.start, at.start + at.count).reverse();
  }

  /** Every commit with its entries, oldest first: what the cache on disk holds. */
  commitsOldestFirst(): Array<[string, readonly AuditEntry[]]> {
    return [...this.commits.keys()].map((oid) => [oid, this.entriesOf(oid)!]);
  }

  /** Adds the next commit on main; commits must come oldest first. */
  append(commit: string, entries: readonly AuditEntry[]): void {
    this.commits.set(commit, { start: this.entries.length, count: entries.length });
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i];
      this.entries.push(entry);
      if (entry.proposalId !== undefined && entry.action !== 'proposal_open' && entry.action !== 'proposal_reject')
        this.applied.set(entry.proposalId, entry);
    }
    this.lastCommit = commit;
  }

  /** The entry of the commit on main that applied a proposal, or undefined while none has. */
  appliedProposal(id: string): AuditEntry | undefined {
    return this.applied.get(id);
  }

  /**
   * A page of main's entries merged with `side` entries (newest first; what lives on other branches, such
   * as proposals being opened and rejected): the newer of the two next entries comes first, main's on a tie.
   * The merged order is walked from the top, so a cursor names any entry of either.
   */
  mergedPage(query: AuditQuery, side: readonly AuditEntry[]): AuditPage {
    if (side.length === 0) return this.page(query);
    let cursor: CursorPosition | undefined;
    if (query.cursor !== undefined && query.cursor !== null) cursor = decodeCursor(query.cursor);
    let passed = cursor === undefined;
    const out: AuditEntry[] = [];
    let lastCursor: string | null = null;
    let i = this.entries.length - 1;
    let s = 0;
    while (i >= 0 || s < side.length) {
      const main = i >= 0 ? this.entries[i] : undefined;
      const other = s < side.length ? side[s] : undefined;
      const takeSide = other !== undefined && (main === undefined || other.at > main.at);
      const entry = takeSide ? other! : main!;
      const here: CursorPosition = takeSide
        ? { commit: entry.id, offset: 0 }
        : { commit: entry.id, offset: i - this.commits.get(entry.id)!.start };
      if (takeSide) s++;
      else i--;
      if (!passed) {
        passed = here.commit === cursor!.commit && here.offset === cursor!.offset;
        continue;
      }
      if (!matchesQuery(entry, query)) continue;
      if (out.length === query.limit) return { entries: out, nextCursor: lastCursor };
      out.push(entry);
      lastCursor = encodeCursor(here);
    }
    if (!passed) throw invalidCursor('is not one this audit trail gave out');
    return { entries: out, nextCursor: null };
  }

  /**
   * Main's entries newest first, down to the first entry the control plane made (not an engineer's commit,
   * whose author date is whatever the author wrote) that is older than `until`: everything above it came to
   * main after it, so the entries of any later moment are among them.
   */
  recent(until: string): AuditEntry[] {
    const out: AuditEntry[] = [];
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i];
      if (entry.actor.type !== 'git' && entry.at < until) break;
      out.push(entry);
    }
    return out;
  }

  page(query: AuditQuery): AuditPage {
    let from = this.entries.length - 1;
    // null from a JavaScript caller passing nextCursor along means the same as no cursor: the first page.
    if (query.cursor !== undefined && query.cursor !== null) from = this.positionOf(query.cursor) - 1;
    const out: AuditEntry[] = [];
    let last = -1;
    for (let i = from; i >= 0; i--) {
      const entry = this.entries[i];
      if (!matchesQuery(entry, query)) continue;
      // One more match exists beyond a full page: only then is there a next page.
      if (out.length === query.limit) return { entries: out, nextCursor: this.cursorAt(last) };
      out.push(entry);
      last = i;
    }
    return { entries: out, nextCursor: null };
  }

  private cursorAt(position: number): string {
    const commit = this.entries[position].id;
    return encodeCursor({ commit, offset: position - this.commits.get(commit)!.start });
  }

  private positionOf(cursor: string): number {
    const { commit, offset } = decodeCursor(cursor);
    const at = this.commits.get(commit);
    if (!at) throw invalidCursor('names a commit that is not on main');
    if (offset >= at.count) throw invalidCursor('is not one this audit trail gave out');
    return at.start + offset;
  }
}
