import { type EnvironmentName, ENVIRONMENTS, type KillsFile, type RepositoryState } from '../model/index.js';
import type { Logger } from '../log/logger.js';
import type { ValidationIssue } from '../validation/issue.js';
import { EnvironmentView } from './environment-view.js';
import type { ServingRepository } from './serving-repository.js';
import { snapshotFlags } from './snapshot-flags.js';
import { allVersionKeys, snapshotVersions, type VersionKey, versionKey } from './snapshot-versions.js';

export interface ServingProblem {
  /** The commit on main that could not be served. */
  commit: string;
  issues: ValidationIssue[];
}

type ProjectViews = Record<EnvironmentName, EnvironmentView>;

/**
 * What one organisation serves, and the one place it changes. Reloads are serialized and coalesced (always to
 * the newest head); each builds new views off to the side and swaps them in with no await in between, so a
 * request sees either the old views or the new ones. A kill made by this process skips the queue when the
 * served commit is the kill commit's parent: only that environment's kill overlay is swapped.
 */
export class OrganisationServing {
  private byProjectId = new Map<string, ProjectViews>();
  private flagsJson = new Map<VersionKey, string>();
  private versions = new Map<VersionKey, number>();
  /** The commit the views represent. */
  private servedHead: string | null = null;
  private state: RepositoryState | null = null;
  private queue: Promise<void> = Promise.resolve();
  problem: ServingProblem | null = null;

  constructor(
    readonly org: string,
    private readonly repo: ServingRepository,
    private readonly logger: Logger,
    private readonly onSwap: (views: EnvironmentView[]) => void,
  ) {}

  get head(): string | null {
    return this.servedHead;
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
    const projectId = this.state?.projects.get(slug)?.project.id;
    const views = projectId === undefined ? undefined : this.byProjectId.get(projectId);
    if (this.servedHead !== parent || views === undefined) return this.reloadToHead();
    const next = views[env].withKills(kills, version, commit);
    views[env] = next;
    this.versions.set(versionKey(slug, env), version);
    this.servedHead = commit;
    this.onSwap([next]);
  }

  private async reload(commit: string | null): Promise<void> {
    const started = performance.now();
    if (commit === null) {
      this.swap(null, { commit: null, projects: new Map() }, new Map());
      return;
    }
    const { state, issues } = await this.repo.readState(commit);
    const keys = allVersionKeys(state.projects.keys());
    const known = this.servedHead === null ? undefined : { commit: this.servedHead, versions: this.versions };
    const versions = await snapshotVersions(this.repo, commit, keys, known);
    if (known && this.servedHead !== known.commit) return this.reload(commit); // the fast path moved on meanwhile
    if (issues.length > 0) {
      // Never serve an invalid commit (contract §2): keep the last good flags and report the problem. The
      // kills files are read on their own (the fast path), so valid kills in it still take effect.
      if (this.problem?.commit !== commit) {
        for (const issue of issues) this.logger.error('invalid file on main; not served', { org: this.org, commit, ...issue });
      }
      this.problem = { commit, issues };
      this.applyKillsOnly(state, versions);
      return;
    }
    this.swap(commit, state, versions);
    this.problem = null;
    this.logger.info('serving', { org: this.org, commit, projects: state.projects.size, ms: Math.round(performance.now() - started) });
  }

  /** Swaps in the kill overlays of `state` where they differ from what is served, leaving the flags as they are. */
  private applyKillsOnly(state: RepositoryState, versions: Map<VersionKey, number>): void {
    const changed: EnvironmentView[] = [];
    for (const [slug, project] of state.projects) {
      const views = this.byProjectId.get(project.project.id);
      if (!views) continue;
      for (const env of ENVIRONMENTS) {
        const old = views[env];
        const version = versions.get(versionKey(slug, env)) ?? old.version;
        if (JSON.stringify(old.kills) === JSON.stringify(project.kills[env]) || version < old.version) continue;
        views[env] = old.withKills(project.kills[env], version, old.commit);
        this.versions.set(versionKey(slug, env), version);
        changed.push(views[env]);
      }
    }
    if (changed.length > 0) this.onSwap(changed);
  }

  /** Builds the changed views and swaps them in; synchronous, so no request sees half of it. */
  private swap(commit: string | null, state: RepositoryState, versions: Map<VersionKey, number>): void {
    const byProjectId = new Map<string, ProjectViews>();
    const flagsJson = new Map<VersionKey, string>();
    const changed: EnvironmentView[] = [];
    for (const [slug, project] of state.projects) {
      const previous = this.byProjectId.get(project.project.id);
      const views = {} as ProjectViews;
      for (const env of ENVIRONMENTS) {
        const key = versionKey(slug, env);
        const version = versions.get(key) ?? 0;
        const flags = snapshotFlags(project, env);
        const json = JSON.stringify(flags);
        const old = previous?.[env];
        let view: EnvironmentView;
        if (old && old.projectSlug === slug && this.flagsJson.get(key) === json) {
          const killsChanged = JSON.stringify(old.kills) !== JSON.stringify(project.kills[env]);
          view = killsChanged || old.version !== version ? old.withKills(project.kills[env], version, commit) : old;
        } else {
          view = EnvironmentView.build(this.org, project.project.id, slug, env, flags, project.kills[env], version, commit);
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
