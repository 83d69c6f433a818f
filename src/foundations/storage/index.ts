/**
 * storage: the one module that owns each organisation's flags repository (the only importer of
 * isomorphic-git, which it needs only for packs with a version-1 index: objects, packs and refs are read and
 * written here, for speed and crash safety). A bare repository, branch `main`; the committed tree is the
 * truth. The repository refuses non-fast-forward pushes and deletes of branches: the log is
 * the audit trail.
 *
 * Two layers under one facade: git/ is git plumbing and knows nothing of flags; served/ reads flags from it
 * (typed state, what a commit serves, history's trailers, the caches). FlagRepository composes them with the
 * write queue (write-queue.ts), commits made from changes (change-committer.ts), branches (branches.ts),
 * the announcements of main's moves (main-moves.ts) and storage faults (storage-fault.ts).
 *
 * ```ts
 * const registry = new RepositoryRegistry({ dataDir, logger });   // <dataDir>/repos/<org>.git
 * const repo = await registry.get('acme');                         // created on first use, one instance per org
 *
 * const { state, issues } = await repo.readState();                // main, typed; or readState(commitOid)
 * const { commit, result, state: after } = await repo.update((current, head) => ({
 *   changes: [{ path: 'projects/shop/environments/prod/checkout.yaml', content: yamlText }],  // null deletes
 *   meta: { action: 'config_update', summary: 'enable checkout in prod', actor, project: 'shop', flag: 'checkout', environment: 'prod' },
 *   result: someValue,
 * }));
 * const stop = repo.onMainMoved(({ from, to, origin }) => { ... });   // origin 'local' | 'external'
 * ```
 *
 * Reading — `readState(commit?)` → `{ commit, state, issues }`: what is valid in the commit itself. Files under `projects/` are parsed with
 * parseRepositoryFile and assembled with assembleState one project at a time; parsed files are reused by
 * blob oid, directories by tree oid and projects' state by their tree, so a new head that changed one file
 * costs one blob and re-checking that file's flag. The state is shared between callers: never mutate it (parsed
 * values are frozen; an in-place edit throws). `issues` lists what was left out of `state` and why.
 *
 * Writing — `update(fn)` makes exactly one commit, authored by `meta.actor` (committer
 * `flagops <flagops@localhost>`), its message carrying `Flagops-*` trailers (docs/architecture.md).
 * - Updates of one instance run one at a time. `main` moves by compare-and-swap under git's own lock
 *   (`refs/heads/main.lock`), so a push or another process landing meanwhile is never overwritten: `fn`
 *   runs again on the new head (it must be safe to re-run; throwing, e.g. VersionConflictError, aborts with
 *   nothing committed). After `maxAttempts` (10) runs: WriteConflictError.
 * - A lock is never taken from its holder. An update waits for it up to `lockTimeoutMs` (5 s from the call,
 *   also while queued behind an update that waits for it) and then gives up with WriteConflictError;
 *   `update(fn, { waitForLock: true })` (kills) waits as long as it takes, logging every 5 s. Locks a crash left are removed by the process that owns the data
 *   directory, at its start (`RepositoryRegistry.removeLeftoverLocks`). Such an update is urgent: the
 *   `publish` of an update ahead of it in the queue is cut off (its signal aborted) after `cutPublishAfterMs`.
 * - Every changed file is parsed first; any issue, or a cross-file issue the change would introduce:
 *   InvalidInputError naming the file and JSON path, nothing committed.
 * - Changes that leave the tree as it is make no commit: the result has `committed: false` and `commit`
 *   is the unchanged head.
 * - Objects are written atomically (temp file + rename, fsync) before the ref, so a crash at any point
 *   leaves `main` at the last complete commit and a repository `git fsck` accepts. `beforeRefUpdate` (an
 *   open option) runs between the two, for tests that simulate the crash.
 * - Returns `{ commit, parent, committed, result, state }`: `state` is the new commit's.
 * - Listeners of `onMainMoved` hear our own commits synchronously, before `update` resolves.
 * - `updateSeries([fn, ...])`: one commit per function, each on the one before, and `main` moved once to the
 *   last (the scheduler applies a thousand due steps this way); a function that throws is left out.
 *
 * Watching — `watch()` follows `refs/heads/main` and `packed-refs` (fs.watch, debounced, and a look every 2 s) and announces
 * moves made outside as `origin: 'external'`; each move is announced once, in order (`from` is the
 * previous announcement's `to`).
 *
 * History — `readCommit(oid)`, `changedPaths(oid)` (vs its first parent), `firstParentLog({ from, until,
 * limit })` (newest first), `height(oid)` (first-parent commits up to and including it; cached),
 * `treeOid(commit, path)`, `readBlob(oid)` (a file version changedPaths names), `resolveRevision(rev)` (HEAD,
 * branch, tag, full or abbreviated id, `~n`, `^n`).
 *
 * Serving — `readServed(commit?)` → `{ commit, state, issues, heldProjects, heldFlags, killFiles }`: what a
 * commit serves (served-state.ts): as committed, except flags and projects whose own files are invalid, which
 * keep their state at the newest first-parent ancestor where those files were valid. What evaluation serves
 * and the control plane shows. `servedChanges(commit, slug)`: the environments whose served snapshot the
 * commit may have changed (snapshot versions).
 *
 * `FlagRepository.open({ dir })` opens a checkout read-only (for `flagops diff`): reads work, `update` rejects.
 */

export { authorIdentity, type Change } from './change-committer.js';
export { FlagRepository, type OpenOptions, type UpdateOptions } from './flag-repository.js';
export type { ChangedPath, ChangeType } from './git/commit-graph.js';
export { type AddedObjects, packOfAdded } from './git/commit-objects.js';
export type { GitIdentity } from './git/git-objects.js';
export { CorruptRefError } from './git/refs.js';
export { LostRepositoryError } from './main-head.js';
export type { MainMoved } from './main-moves.js';
export { ORG_NAME, type RegistryOptions, RepositoryRegistry } from './repository-registry.js';
export type { CommitMeta, FlagopsTrailers, GitTrailer, ParsedMessage, ProposalActor, ProposalBudget } from './served/commit-message.js';
export { formatCommitMessage, parseCommitMessage, readFlagopsTrailers } from './served/commit-message.js';
export type { CommitInfo } from './served/history.js';
export type { FileChange } from './served/prepare-change.js';
export { heldBackBy, type ServedState } from './served/served-state.js';
export type { LoadedState } from './served/state-loader.js';
export type { MainRebuild, MainWrite, SeriesChange, SeriesOutcome, SeriesResult, UpdateResult, WriteFn } from './write-queue.js';
export { PUBLISH_CUT_WHEN_ASKED } from './write-queue.js';
