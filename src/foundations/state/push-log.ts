import type { Pusher } from '@flagops/core';

/** Who pushed a commit that came in over git over HTTP. */
export interface PushRecord {
  commit: string;
  pushedBy: Pusher;
  /** When the push was checked, ISO-8601. */
  at: string;
}

/** One organisation's pushers, as far as it has read them. */
export interface PushReader {
  /** Reads what was recorded since the last refresh. */
  refresh(): Promise<void>;
  /** Who pushed `commit`, as of the last refresh; a commit recorded twice belongs to the last record. */
  pusherOf(commit: string): Pusher | undefined;
  /** When the push of `commit` was checked (ISO-8601), as of the last refresh; the author date may say anything. */
  pushedAt(commit: string): string | undefined;
}

/**
 * Who pushed each commit that came in over git over HTTP, per organisation, as git hosts record the pusher beside
 * the author a commit claims: recorded by the push check before git accepts the push (so it is there before
 * `main` can move), kept across restarts and rebuilds of the audit index.
 */
export interface PushLog {
  /** Records the pushers of `org`'s commits; resolves once a crash can no longer lose them. */
  append(org: string, records: readonly PushRecord[]): Promise<void>;
  /** A reader of `org`'s records, from the first on. */
  reader(org: string): PushReader;
  /**
   * Where the pre-receive hook, a process git starts, records `org`'s pushes: a string for its environment,
   * which the hook hands to appendPushRecords.
   */
  hookTarget(org: string): string;
}
