import { ENVIRONMENTS, type EnvironmentName, type KillsFile, type RepositoryState } from '@flagops/core';
import type { Logger } from '../../foundations/log/logger.js';
import { layout } from '../../foundations/repository/layout.js';
import { formatIssue, type ValidationIssue } from '../../foundations/validation/issue.js';
import { EnvironmentView } from './environment-view.js';
import type { ServingRepository } from './serving-repository.js';
import { allVersionKeys, snapshotFlags, snapshotSegments, snapshotVersions, type VersionKey, versionKey } from './snapshot-versions.js';

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
  private flagsJson = new Map<VersionKey, string>();
  private versions = new Map<VersionKey, number>();
  /** The commit the views represent, and its height (what a replica compares control planes by). */
  private servedHead: string | null = null;
  private servedHeight = 0;
  private state: RepositoryState | null = null;
  private queue: Promise<void> = Promise.resolve();
  /** The problems of the served commit: files that are invalid, and what they hold back keeps its last valid state. */
  issues: readonly ValidationIssue[] = [];

  constructor(
    readonly org: string,
    private readonly repo: ServingRepository,
    private readonly logger: Logger,
    private readonly onSwap: (views: EnvironmentView[]) => void,
  ) {}

  get head(): string | null {
    return this.servedHead;
  }

  /** The served commit with its height, read together; null when nothing is committed. */
  get headAndHeight(): { commit: string; height: number } | null {
    return this.servedHead === null ? null : { commit: this.servedHead, height: this.servedHeight };
  }

  fault() {
    return this.repo.fault?.();
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
   * (or a newer one). Reloads run one at a time; a burst of moves coalesces because each reads the head afresh.
   */
  reloadToHead(): Promise<void> {
    const run = this.queue.then(async () => {
      try {
        const target = await this.repo.head();
        if (target !== this.servedHead) await this.reload(target);
      } catch (err) {
        this.logger.error('reload failed; still serving the last good state', { org: this.org, err });
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
  async applyKills(slug: string, env: EnvironmentName, kills: KillsFile, commit: string, parent: string | null): Promise<void> {
    const version = await this.repo.height(commit);
    const project = this.state?.projects.get(slug);
    const views = project === undefined ? undefined : this.byProjectId.get(project.project.id);
    // A kill that rewrote an invalid kills file may release the project it held back: that is a full reload.
    const killsFile = layout.killsFile(slug, env);
    if (this.servedHead !== parent || views === undefined || this.issues.some((issue) => issue.file === killsFile))
      return this.reloadToHead();
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
    if (known && this.servedHead !== known.commit) return this.reload(commit); // the fast path moved on meanwhile
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

  /** Builds the changed views and swaps them in; synchronous, so no request sees half of it. */
  private swap(commit: string | null, state: RepositoryState, versions: Map<VersionKey, number>): void {
    const byProjectId = new Map<string, ProjectViews>();
    const flagsJson = new Map<VersionKey, string>();
    const changed: EnvironmentView[] = [];
    for (const [slug, project] of state.projects) {
      const previous = this.byProjectId.get(project.project.id);
      const views = {} as ProjectViews;
      const segments = snapshotSegments(project);
      const segmentsJson = JSON.stringify(segments);
      for (const env of ENVIRONMENTS) {
        const key = versionKey(slug, env);
        const version = versions.get(key) ?? 0;
        const flags = snapshotFlags(project, env);
        // What the compiled view depends on: a segment change recompiles, a kill alone does not.
        const json = JSON.stringify(flags) + segmentsJson;
        const old = previous?.[env];
        let view: EnvironmentView;
        if (old && old.projectSlug === slug && this.flagsJson.get(key) === json) {
          const killsChanged = JSON.stringify(old.kills) !== JSON.stringify(project.kills[env]);
          view = killsChanged || old.version !== version ? old.withKills(project.kills[env], version, commit) : old;
        } else {
          view = EnvironmentView.build(this.org, project.project.id, slug, env, flags, project.kills[env], version, commit, segments);
        }
        if (view !== old) changed.push(view);
        views[env] = view;
        flagsJson.set(key, json);
      }
      byProjectId.set(project.project.id, views);
    }
    this.byProjectId = byProjectId;
    this.flagsJson = flagsJson;
    this.versions = versions;
    this.state = state;
    this.servedHead = commit;
    if (changed.length > 0) this.onSwap(changed);
  }
}
