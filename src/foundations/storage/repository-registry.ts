import { basename, join, resolve } from 'node:path';
import { FlagopsError, InvalidInputError } from '../errors/kinds.js';
import { type Logger, silentLogger } from '../log/logger.js';
import type { CommitTrustStore } from '../state/index.js';
import { loadSigningKey } from './commit-trust.js';
import { FlagRepository, type OpenOptions } from './flag-repository.js';
import { Housekeeping } from './git/housekeeping.js';
import { isRepository, leavePackingToTheService } from './git/init-repository.js';
import { removeLeftoverTempFiles } from './git/leftover-temp-files.js';
import { MAIN_REF, readRef, removeLeftoverRefLocks } from './git/refs.js';
import { assertRepositoryKept } from './main-head.js';

/** Organisation names become directory names, so they are kept to a set that cannot leave the data dir. */
export const ORG_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export interface RegistryOptions {
  dataDir: string;
  logger?: Logger;
  /** Watch each repository for pushes from outside (default true). */
  watch?: boolean;
  /** Passed to every FlagRepository.open (clock, durable, ...). */
  repository?: Omit<OpenOptions, 'gitdir' | 'dir' | 'create' | 'logger'>;
  /** Pack a repository after this many moves of its main (default 1000; 0: never); housekeeping.ts. */
  gcEveryCommits?: number;
  /** The installation's signing key and where unsigned trailers stop being believed (the control plane's state). */
  trust: CommitTrustStore;
  /** FLAGOPS_COMMIT_SIGNING_KEY: the key commits are signed with, instead of the installation's (`trust`). */
  commitSigningKey?: string;
  /**
   * Remote mode: the organisation whose repository follows a git remote. A missing one is made empty and
   * fetched from the remote, where every other organisation's missing repository stops its opening.
   */
  remoteOrg?: string;
  /** Called with the organisation and the git command (`repack`, `gc`) each time its housekeeping fails. */
  onHousekeepingFailure?: (org: string, step: string) => void;
}

/**
 * Every organisation's repository, at `<dataDir>/repos/<org>.git`, created on the organisation's first use
 * (never again: one opened before and missing now is LostRepositoryError), one instance each.
 */
export class RepositoryRegistry {
  private readonly repos = new Map<string, Promise<FlagRepository>>();
  private readonly logger: Logger;
  private signingKey: Promise<Buffer> | undefined;
  /** Set by closeAll: a repository opened after it would write to a data directory its owner has let go of. */
  private closed = false;
  readonly housekeeping: Housekeeping;

  constructor(private readonly options: RegistryOptions) {
    this.logger = options.logger ?? silentLogger;
    const onFailure = options.onHousekeepingFailure;
    this.housekeeping = new Housekeeping({
      everyCommits: options.gcEveryCommits ?? 1000,
      logger: this.logger,
      ...(onFailure ? { onFailure: (gitdir: string, step: string) => onFailure(basename(gitdir, '.git'), step) } : {}),
    });
  }

  gitdirOf(org: string): string {
    if (!ORG_NAME.test(org)) throw new InvalidInputError(`organisation name ${JSON.stringify(org)} must match ${ORG_NAME.source}`, 'org');
    return join(resolve(this.options.dataDir), 'repos', `${org}.git`);
  }

  /**
   * Removes the ref locks a crash left in the organisation's repository (refs.ts removeLeftoverRefLocks),
   * logging each by organisation and name. Only for the service that owns the data directory, at its start,
   * before it writes: while it runs, a lock is never taken from its holder.
   */
  async removeLeftoverLocks(org: string): Promise<void> {
    for (const lock of await removeLeftoverRefLocks(this.gitdirOf(org))) {
      this.logger.warn('removed a ref lock left by a crash', { org, lock: lock.file });
    }
  }

  /**
   * Removes the temporary object files (unfinished packs and loose objects) that writers which died left in
   * the organisation's repository (git/leftover-temp-files.ts), logging how many. At the start of the service
   * that owns the data directory, like removeLeftoverLocks.
   */
  removeLeftoverTempFiles(org: string): void {
    const removed = removeLeftoverTempFiles(this.gitdirOf(org));
    if (removed.length > 0) this.logger.warn('removed temporary files left by a crash', { org, files: removed.length });
  }

  /**
   * Makes sure git never packs the organisation's repository on its own, beside the service's housekeeping
   * (init-repository.ts leavePackingToTheService): for repositories made before new ones were configured so.
   * At the start of the service that owns the data directory; a failure is logged, and the start goes on.
   */
  async leavePackingToTheService(org: string): Promise<void> {
    const gitdir = this.gitdirOf(org);
    if (!(await isRepository(gitdir))) return;
    try {
      const set = await leavePackingToTheService(gitdir);
      if (set.length > 0) this.logger.info('git no longer packs the repository on its own; the service does', { org, set });
    } catch (err) {
      this.logger.warn('could not stop git packing the repository on its own', { org, err });
    }
  }

  get(org: string): Promise<FlagRepository> {
    let repo = this.repos.get(org);
    if (!repo) {
      if (this.closed) return Promise.reject(new FlagopsError('unavailable', 'the service is stopping; try again shortly'));
      let gitdir: string;
      try {
        gitdir = this.gitdirOf(org);
      } catch (err) {
        return Promise.reject(err);
      }
      repo = this.openRepository(org, gitdir);
      this.repos.set(org, repo);
      // A failed open is not remembered: the next call tries again.
      const failed = repo;
      failed.catch(() => {
        if (this.repos.get(org) === failed) this.repos.delete(org);
      });
    }
    return repo;
  }

  private async openRepository(org: string, gitdir: string): Promise<FlagRepository> {
    this.signingKey ??= loadSigningKey(this.options.trust, this.options.commitSigningKey);
    const signingKey = await this.signingKey.catch((err) => {
      this.signingKey = undefined;
      throw err;
    });
    // Read before opening creates anything: a repository this version has never opened holds only commits
    // made before signing began (or none). The head is asked for only when nothing is recorded yet.
    let firstOpen = false;
    const upTo = await this.options.trust.unsignedTrailersUpTo(org, async () => {
      firstOpen = true;
      return (await isRepository(gitdir)) ? readRef(gitdir, MAIN_REF) : null;
    });
    // Recorded at an earlier open: a repository missing now was lost (moved, deleted), and an empty one made in
    // its place would answer as if the organisation had no projects and orphan its history.
    if (!firstOpen && org !== this.options.remoteOrg) await assertRepositoryKept(gitdir);
    const trust = { signingKey, unsignedTrailersUpTo: upTo };
    const repo = await FlagRepository.open({
      ...this.options.repository,
      ...trust,
      gitdir,
      create: true,
      logger: this.logger.child({ org }),
      repacking: () => this.housekeeping.busy(gitdir),
    });
    // The first look at its files, before anything is served or written on it: a pack damaged while the service
    // was stopped, or a disk full or read-only, is a fault from the start, not from the next storage check.
    repo.probeWritable();
    await repo.probeReadable();
    repo.onMainMoved(() => this.housekeeping.mainMoved(gitdir, () => repo.packsChanged()));
    if (this.options.watch ?? true) await repo.watch();
    return repo;
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    await this.housekeeping.close();
    const opened = [...this.repos.values()];
    this.repos.clear();
    await Promise.all(opened.map((p) => p.then((repo) => repo.close()).catch(() => {})));
  }
}
