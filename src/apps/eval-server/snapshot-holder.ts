import type { EnvironmentName, KillsFile } from '@flagops/core';
import { StartingError } from '../../foundations/errors/kinds.js';
import type { Logger } from '../../foundations/log/logger.js';
import { invalidFile } from '../../foundations/repository/held-units.js';
import type { EnvironmentView } from './environment-view.js';
import { OrganisationServing } from './organisation-serving.js';
import type { HolderHealth, OrganisationHealth, ServingRepository } from './serving-repository.js';

export type { HolderHealth, OrganisationHealth, ServingRepository };

/**
 * The snapshots the evaluation server serves, per organisation, kept current with `main`: every move of main
 * (our commits at once, outside pushes through the store's watcher) reloads what changed.
 */
export class SnapshotHolder {
  private readonly orgs = new Map<string, OrganisationServing>();
  private readonly unsubscribe: Array<() => void> = [];
  private readonly listeners = new Set<(views: EnvironmentView[]) => void>();

  constructor(private readonly logger: Logger) {}

  /**
   * Starts serving an organisation's repository and resolves once its current head is served. `noStateYet`
   * says why the repository holds no state to serve yet, while it holds none (remote mode: the git remote not
   * read yet): nothing is served meanwhile, and `served(org)` is called once there is one.
   */
  async add(org: string, repo: ServingRepository, noStateYet?: () => string | undefined): Promise<void> {
    if (this.orgs.has(org)) return;
    const serving = new OrganisationServing(org, repo, this.logger.child({ org }), (views) => this.emit(views), noStateYet);
    this.orgs.set(org, serving);
    this.unsubscribe.push(repo.onMainMoved(() => void serving.reloadToHead()));
    await serving.reloadToHead();
  }

  /** Whether `org` was added: its first reload may still be under way (see servesMain). */
  has(org: string): boolean {
    return this.orgs.has(org);
  }

  /**
   * Whether `org` serves a state of main: only then does a project without views not exist. An organisation is
   * added before its first reload is done, and that reload takes a while on a large repository.
   */
  servesMain(org: string): boolean {
    return this.orgs.get(org)?.servesMain ?? false;
  }

  /**
   * 503 (StartingError) when `org` has no state at all to answer from yet (its git remote not read, nothing
   * from before): not even the control plane may answer then, as an empty state would say nothing exists.
   */
  noState(org: string): StartingError | undefined {
    const why = this.orgs.get(org)?.noStateReason;
    return why === undefined ? undefined : new StartingError(why);
  }

  view(org: string, projectId: string, env: EnvironmentName): EnvironmentView | undefined {
    return this.orgs.get(org)?.view(projectId, env);
  }

  /** The commit `org`'s views represent with its height, read together; null when none. */
  servedHeadAndHeight(org: string): { commit: string; height: number } | null {
    return this.orgs.get(org)?.headAndHeight ?? null;
  }

  /** Every view served, of every organisation (for the metrics). */
  views(): EnvironmentView[] {
    return [...this.orgs.values()].flatMap((o) => o.views());
  }

  /** Resolves once `org` serves main's head or a newer one, or once that failed (the last good state serves on). */
  async served(org: string): Promise<void> {
    await this.orgs.get(org)?.reloadToHead();
  }

  /**
   * Resolves once `org` serves main's head or a newer one; rejects with the storage fault that keeps it from
   * serving it (read-your-writes for the control plane: a write is not acknowledged unless it is served).
   */
  async serveHead(org: string): Promise<void> {
    await this.orgs.get(org)?.serveHead();
  }

  /** The kill fast path: see OrganisationServing.applyKills. */
  async applyKills(
    org: string,
    slug: string,
    env: EnvironmentName,
    kills: KillsFile,
    commit: string,
    parent: string | null,
  ): Promise<void> {
    await this.orgs.get(org)?.applyKills(slug, env, kills, commit, parent);
  }

  /** Called with the views that changed on every swap (streams announce new versions with it). */
  onChange(listener: (views: EnvironmentView[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  health(): HolderHealth {
    const organisations = [...this.orgs.values()].map((o) => {
      const health: OrganisationHealth = { org: o.org, commit: o.head, invalidFiles: o.issues.map(invalidFile) };
      const fault = o.fault();
      if (fault) health.fault = fault;
      return health;
    });
    return { ready: true, organisations };
  }

  /** The id of the project an organisation serves under `slug`, if it serves one. */
  projectIdOf(org: string, slug: string): string | undefined {
    return this.orgs.get(org)?.projectIdOf(slug);
  }

  /** The storage fault of an organisation's repository now, if it has one. */
  fault(org: string): OrganisationHealth['fault'] {
    return this.orgs.get(org)?.fault();
  }

  close(): void {
    for (const off of this.unsubscribe.splice(0)) off();
  }

  private emit(views: EnvironmentView[]): void {
    for (const listener of this.listeners) {
      try {
        listener(views);
      } catch (err) {
        this.logger.error('snapshot listener failed', { err });
      }
    }
  }
}
