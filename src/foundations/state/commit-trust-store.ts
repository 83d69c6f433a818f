/**
 * What lets the audit trail believe a commit's `Flagops-*` trailers: the installation's key for commit
 * signatures, and per organisation the commit up to which unsigned trailers are believed (commits made before
 * commits were signed). Each is made once and is the same ever after, for every instance.
 */
export interface CommitTrustStore {
  /** The installation's signing key, 32 random bytes or more, made on first use. */
  signingKey(): Promise<Buffer>;
  /**
   * The commit up to which unsigned trailers of `org` are believed: recorded the first time this is asked
   * (`head()` then, null for an empty or new repository), the same answer ever after.
   */
  unsignedTrailersUpTo(org: string, head: () => Promise<string | null>): Promise<string | null>;
}
