/**
 * audit: the audit trail (docs/audit.md), read from main's git log and kept in memory per organisation.
 *
 * ```ts
 * const audit = new AuditRegistry({ repos: repositoryRegistry, logger });
 * const index = await audit.get('acme');                  // built from the log on first use, then follows main
 * const page = await index.query({ flagKey: 'checkout-v2', environment: 'prod', limit: 50 });
 * const next = await index.query({ flagKey: 'checkout-v2', environment: 'prod', limit: 50, cursor: page.nextCursor! });
 * ```
 *
 * - Newest first along main's first parents. A commit the control plane made (its signature proves it) is
 *   one entry from its `Flagops-*` trailers; any other commit is one entry per (project, flag, environment)
 *   its diff changed, actor `{ type: 'git', name: <author> }`, plus `pushedBy` (the key) when it came over
 *   git over HTTP (the `pushes` log of the control plane's state). docs/audit.md has the rules.
 * - Cursors are opaque; a bad one is InvalidInputError naming `cursor`. Commits that land between two pages
 *   come before the cursor, so paging neither repeats nor skips entries.
 * - `query` waits for moves of main already announced (onMainMoved), so a caller sees the commit it just made.
 * - With `cacheDir` (registry) or `cacheFile` (index) the index is also kept on disk, so a restart reads only
 *   the commits made since; without, a start reads the whole first-parent log once.
 */
export { AuditIndex, type AuditIndexOptions, type AuditSource } from './audit-index.js';
export { type AuditPage, type AuditQuery, MAX_LIMIT } from './audit-query.js';
export { AuditRegistry, type AuditRegistryOptions } from './audit-registry.js';
export { describeCommit } from './commit-entries.js';
