import {
  ENVIRONMENTS,
  type EnvironmentName,
  type KillsFile,
  type ProjectState,
  type RepositoryState,
  type SegmentFile,
  type SnapshotSegment,
} from '@flagops/core';
import { servesSameKills } from '../../features/kill/apply-kills.js';
import { FlagopsError, StorageFaultError } from '../../foundations/errors/kinds.js';
import type { Logger } from '../../foundations/log/logger.js';
import { layout } from '../../foundations/repository/layout.js';
import { formatIssue, type ValidationIssue } from '../../foundations/validation/issue.js';
import { EnvironmentView } from './environment-view.js';
import type { OrganisationHealth, ServingRepository } from './serving-repository.js';
import {
  allVersionKeys,
  nextSnapshotFlags,
  type ProjectFlagChanges,
  projectFlagChanges,
  snapshotFlags,
  snapshotSegments,
  snapshotVersions,
  type VersionKey,
  versionKey,
} from './snapshot-versions.js';

type ProjectViews = Record<EnvironmentName, EnvironmentView>;

/**
 * What one organisation serves, and the one place it changes: the served state of main's head (as committed,
 * with what invalid files hold back at its last valid state). Reloads are serialized and coalesced (always to
 * the newest head); each builds new views off to the side and swaps them in with no await in between, so a
 * request sees either the old views or the new ones. A kill made by this process skips the queue when the
 * served commit is the kill commit's parent and that kills file was valid: only that environment's kill
 * overlay is swapped.
 */
export class OrganisationServing {
  private byProjectId = new Map<string, ProjectViews>();
  private versions = new Map<VersionKey, number>();
  /** The commit the views represent, and its height (what a replica compares control planes by). */
  private servedHead: string | null = null;
  private servedHeight = 0;
  private state: RepositoryState | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** The problems of the served commit: files that are invalid, and what they hold back keeps its last valid state. */
  issues: readonly ValidationIssue[] = [];
  /**
   * Why main's head is not served: the storage fault the last reload failed on (a commit missing from main's
   * history, which the versions count), until a reload serves the head. The repository may read fine otherwise.
   */
  private reloadFault: OrganisationHealth['fault'];

  constructor(
    readonly org: string,
    private readonly repo: ServingRepository,
    private readonly logger: Logger,
    private readonly onSwap: (views: EnvironmentView[]) => void,
    /**
     * Why the repository holds no state to serve yet, when it holds none (remote mode: the git remote not read
     * yet, and no main from before): main, empty or not, is not served until this is undefined.
     */
    private readonly noStateYet: () => string | undefined = () => undefined,
  ) {}

  get head(): string | null {
    return this.servedHead;
  }

  /** The served commit with its height, read together; null when nothing is committed. */
  get headAndHeight(): { commit: string; height: number } | null {
    return this.servedHead === null ? null : { commit: this.servedHead, height: this.servedHeight };
  }

  /** Why main's head is not served (the repository's own read fault first, when that is another), else the repository's fault. */
  fault(): OrganisationHealth['fault'] {
    const stored = this.repo.fault?.();
    if (this.reloadFault === undefined || (stored?.kind === 'read' && stored.message !== this.reloadFault.message)) return stored;
    return this.reloadFault;
  }

  /**
   * Whether a state of main is served, so a project without views is not on main. False from registration
   * until the first reload swaps one in (seconds on a large repository), and while that reload failed.
   */
  get servesMain(): boolean {
    return this.state !== null;
  }

  /** Why no state of main is served, when that is because the repository holds none yet (see noStateYet). */
  get noStateReason(): string | undefined {
    return this.state === null ? this.noStateYet() : undefined;
  }

  view(projectId: string, env: EnvironmentName): EnvironmentView | undefined {
    return this.byProjectId.get(projectId)?.[env];
  }

  /** Every view currently served (for health reports and streams). */
  views(): EnvironmentView[] {
    return [...this.byProjectId.values()].flatMap((p) => ENVIRONMENTS.map((env) => p[env]));
  }

  /**
   * Serve the head of main: resolves once the views represent the head as it was when this call's turn came
   * (or a newer one), or once that failed (logged; the last good state keeps serving). Reloads run one at a
   * time; a burst of moves coalesces because each reads the head afresh.
   */
  reloadToHead(): Promise<void> {
    return this.queueReload().then(() => undefined);
  }

  /**
   * As reloadToHead, but rejects with what kept main's head from being served (a StorageFaultError: 503): a
   * write waits for this before it is acknowledged, so none is acknowledged that evaluation does not serve.
   */
  async serveHead(): Promise<void> {
    const failure = await this.queueReload();
    if (failure === undefined) return;
    if (failure instanceof StorageFaultError) throw failure;
    // Anything else that kept the head from being served is reported as such (503), not as an internal error.
    throw new FlagopsError(
      'unavailable',
      `evaluation could not serve main's head of ${this.org}: ${(failure as Error).message ?? String(failure)}`,
    );
  }

  /** Queues a reload to main's head; resolves with why it failed, or undefined once the head is served. */
  private queueReload(): Promise<unknown> {
    const run = this.queue.then(async () => {
      try {
        const target = await this.repo.head();
        // An empty main is served too (state null until then): no projects, rather than "starting" for ever.
        if (target !== this.servedHead || this.state === null) await this.reload(target);
        if (this.reloadFault) this.logger.info('serving main again', { org: this.org, fault: this.reloadFault.message });
        this.reloadFault = undefined;
        this.repo.setServingFault?.(undefined);
        return undefined;
      } catch (err) {
        if (err instanceof StorageFaultError) {
          // Writes on a head that cannot be served are refused until it is (the repository holds them back).
          this.repo.setServingFault?.(err);
          // Tried again every few seconds while it stays (the service's storage check): logged when it appears.
          if (this.reloadFault?.message === err.fault) return err;
          this.reloadFault = { kind: err.kind, message: err.fault, since: this.reloadFault?.since ?? new Date().toISOString() };
        }
        this.logger.error('reload failed; still serving the last good state', { org: this.org, err });
        return err;
      }
    });
    this.queue = run;
    return run;
  }

  /**
   * The kill fast path: `commit` changed only this environment's kills file, on top of `parent`. When the
   * views represent `parent`, the new overlay is swapped in at once, without reading or compiling anything
   * else; otherwise (a reload is under way) the kill waits for the reload queue.
   */
  /** The id of the project served under `slug`, if one is. */
  projectIdOf(slug: string): string | undefined {
    return this.state?.projects.get(slug)?.project.id;
  }

  async applyKills(slug: string, env: EnvironmentName, kills: KillsFile, commit: string, parent: string | null): Promise<void> {
    const version = await this.repo.height(commit);
    const project = this.state?.projects.get(slug);
    const views = project === undefined ? undefined : this.byProjectId.get(project.project.id);
    // A kill that rewrote an invalid kills file may release the project it held back: that is a full reload.
    const killsFile = layout.killsFile(slug, env);
    if (this.servedHead !== parent || views === undefined || this.issues.some((issue) => issue.file === killsFile)) return this.serveHead();
    // withKills applies the kills over the view's flags (applyKills): kills of flags it does not serve are left out.
    this.swapKills(views, slug, env, kills, commit, version);
  }

  private swapKills(views: ProjectViews, slug: string, env: EnvironmentName, kills: KillsFile, commit: string, version: number): void {
    const next = views[env].withKills(kills, version, commit);
    views[env] = next;
    this.versions.set(versionKey(slug, env), version);
    this.servedHead = commit;
    this.servedHeight = version;
    this.onSwap([next]);
  }

  private async reload(commit: string | null): Promise<void> {
    const started = performance.now();
    // Served as soon as there is a state to serve (the holder is told): an empty one meanwhile would answer 404s.
    if (this.noStateYet() !== undefined) return;
    if (commit === null) {
      this.swap(null, { commit: null, projects: new Map() }, new Map());
      this.servedHeight = 0;
      this.issues = [];
      return;
    }
    // What is valid is served as committed; what an invalid file holds back keeps its last valid state.
    const { state, issues } = await this.repo.readServed(commit);
    const keys = allVersionKeys(state.projects.keys());
    const known = this.servedHead === null ? undefined : { commit: this.servedHead, versions: this.versions };
    const versions = await snapshotVersions(this.repo, commit, keys, known);
    const height = await this.repo.height(commit);
    if (known && this.servedHead !== known.commit) {
      // The fast path moved on meanwhile: to this very commit (a kill, served already), or past it.
      if (this.servedHead !== commit) return this.reload(commit);
      this.state = state;
      return;
    }
    this.logNewIssues(commit, issues);
    this.swap(commit, state, versions);
    this.servedHeight = height;
    this.issues = issues;
    this.logger.info('serving', {
      org: this.org,
      commit,
      projects: state.projects.size,
      invalidFiles: issues.length,
      ms: Math.round(performance.now() - started),
    });
  }

  /** Each problem is logged once, when it first appears on main, not at every reload while it stays. */
  private logNewIssues(commit: string, issues: readonly ValidationIssue[]): void {
    const before = new Set(this.issues.map(formatIssue));
    for (const issue of issues) {
      if (!before.has(formatIssue(issue)))
        this.logger.error('invalid file on main; what it belongs to keeps its last valid state', { org: this.org, commit, ...issue });
    }
  }

  /**
   * Builds the changed views and swaps them in; synchronous, so no request sees half of it. A view is made
   * from the one it replaces (nextSnapshotFlags, EnvironmentView.withFlags): what a change costs grows with
   * the flags it changed, not with the environment.
   */
  private swap(commit: string | null, state: RepositoryState, versions: Map<VersionKey, number>): void {
    const byProjectId = new Map<string, ProjectViews>();
    const changed: EnvironmentView[] = [];
    for (const [slug, project] of state.projects) {
      const previous = this.byProjectId.get(project.project.id);
      // The state the previous views were made from, when they are this project's under the same slug.
      const before = this.state?.projects.get(slug);
      const same = previous !== undefined && before !== undefined && before.project.id === project.project.id;
      const views = {} as ProjectViews;
      const segments = same ? nextSegments(project, before, previous.dev.segments) : snapshotSegments(project);
      let flagChanges: ProjectFlagChanges | undefined;
      for (const env of ENVIRONMENTS) {
        const version = versions.get(versionKey(slug, env)) ?? 0;
        const kills = project.kills[env];
        const old = previous?.[env];
        let view: EnvironmentView;
        if (!same || old === undefined || old.projectSlug !== slug) {
          view = EnvironmentView.build(
            this.org,
            project.project.id,
            slug,
            env,
            snapshotFlags(project, env),
            kills,
            version,
            commit,
            segments,
          );
        } else {
          flagChanges ??= projectFlagChanges(project, before);
          const next = nextSnapshotFlags(project, env, before, { flags: old.flags, keys: old.compiled.keys }, flagChanges);
          if (next.flags !== old.flags || segments !== old.segments) {
            const changes = next.changed && { keys: next.keys, changed: next.changed };
            view = old.withFlags(next.flags, segments, kills, version, commit, changes);
          } else if (old.version !== version || !servesSameKills(old.kills, old.flags, kills)) view = old.withKills(kills, version, commit);
          else view = old;
        }
        if (view !== old) changed.push(view);
        views[env] = view;
      }
      byProjectId.set(project.project.id, views);
    }
    this.byProjectId = byProjectId;
    this.versions = versions;
    this.state = state;
    this.servedHead = commit;
    if (changed.length > 0) this.onSwap(changed);
  }
}

/**
 * The project's segments as snapshots carry them, the previous object when they did not change (the compiled
 * segments, and so the compiled flags, are then kept).
 */
function nextSegments(
  project: ProjectState,
  before: ProjectState,
  previous: Readonly<Record<string, SnapshotSegment>>,
): Readonly<Record<string, SnapshotSegment>> {
  if ((project.segments ?? EMPTY) === (before.segments ?? EMPTY)) return previous;
  const segments = snapshotSegments(project);
  return JSON.stringify(segments) === JSON.stringify(previous) ? previous : segments;
}

const EMPTY: ReadonlyMap<string, SegmentFile> = new Map();
