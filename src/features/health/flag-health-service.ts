import { join } from 'node:path';
import { ENVIRONMENTS, type EnvironmentConfig, type EnvironmentName, type ProjectState } from '@flagops/core';
import { type Logger, silentLogger } from '../../foundations/log/logger.js';
import { loopTurn } from '../../foundations/process/loop-turns.js';
import { ORG_NAME } from '../../foundations/storage/index.js';
import { decideHealth, type FlagHealth, type FlagHealthInput } from './decide-health.js';
import { effectiveKey } from './flag-history.js';
import { type HistorySource, HistoryTracker } from './history-tracker.js';
import { type ServedSummary, summarizeServed } from './served-summary.js';

export interface FlagHealthServiceOptions {
  repos: { get(org: string): Promise<HistorySource> };
  /** Per organisation, project id and environment, each flag's latest possible evaluation (epoch ms). */
  lastEvaluated(org: string, projectId: string, env: EnvironmentName): ReadonlyMap<string, number>;
  /** How many days of evaluation counts are kept. */
  countsKeptDays: number;
  /** Keep each organisation's history between restarts as `<cacheDir>/<org>.json`. */
  cacheDir?: string;
  logger?: Logger;
}

export interface HealthQuery {
  org: string;
  /** The project as served now (archived flags are left out of the answer). */
  project: ProjectState;
  now: number;
  staleAfterDays: number;
}

export const DEFAULT_STALE_AFTER_DAYS = 30;

/**
 * Flag health (docs/flag-health.md): what history says of each flag (HistoryTracker, one per organisation,
 * built on first use and then followed as main moves) with the evaluation counts, decided by decideHealth.
 */
export class FlagHealthService {
  private readonly trackers = new Map<string, Promise<HistoryTracker>>();
  private readonly logger: Logger;
  private readonly served = new WeakMap<EnvironmentConfig, [ServedSummary, ServedSummary]>();

  constructor(private readonly options: FlagHealthServiceOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  /** Starts reading an organisation's history now, rather than on its first question. */
  warm(org: string): void {
    this.tracker(org)
      .then((t) => t.current())
      .catch((err) => this.logger.warn('reading flag history for health failed', { org, err }));
  }

  async report(query: HealthQuery): Promise<FlagHealth[]> {
    const { history } = await (await this.tracker(query.org)).current();
    const { project } = query;
    const slug = project.project.slug;
    const evaluated = ENVIRONMENTS.map((env) => this.options.lastEvaluated(query.org, project.project.id, env));
    const settings = { now: query.now, staleAfterDays: query.staleAfterDays, countsKeptDays: this.options.countsKeptDays };
    const out: FlagHealth[] = [];
    let n = 0;
    for (const [key, flag] of project.flags) {
      // Evaluation may run in this process: a project of 10,000 flags is decided in turns of a few milliseconds.
      if (++n % 32 === 0) await loopTurn();
      if (flag.meta.archivedAt !== null) continue;
      const record = history.flags.get(`${slug}/${key}`);
      const environments: Partial<Record<EnvironmentName, FlagHealthInput['environments'][EnvironmentName]>> = {};
      for (const env of ENVIRONMENTS) {
        const served = this.summary(flag.environments[env], project.kills[env]?.kills[key] !== undefined);
        // History's word on since when holds only for what is served now (it may lag main by a commit).
        const since = record && effectiveKey(record, env) === served.key ? record.since[env] : undefined;
        environments[env] = { served, since };
      }
      let lastEvaluatedAt: number | undefined;
      for (const counts of evaluated) {
        const at = counts.get(key);
        if (at !== undefined && (lastEvaluatedAt === undefined || at > lastEvaluatedAt)) lastEvaluatedAt = at;
      }
      const lifecycle = flag.meta.lifecycle;
      out.push(
        decideHealth(
          {
            key,
            type: lifecycle?.type ?? 'release',
            ...(lifecycle?.expiresAt !== undefined ? { expiresAt: lifecycle.expiresAt } : {}),
            createdAt: record?.createdAt,
            environments: environments as FlagHealthInput['environments'],
            lastEvaluatedAt,
          },
          settings,
        ),
      );
    }
    return out;
  }

  async closeAll(): Promise<void> {
    const trackers = [...this.trackers.values()];
    this.trackers.clear();
    await Promise.all(trackers.map((t) => t.then((tracker) => tracker.close()).catch(() => {})));
  }

  private summary(config: EnvironmentConfig, killed: boolean): ServedSummary {
    let pair = this.served.get(config);
    if (!pair) {
      pair = [summarizeServed(config, false), summarizeServed(config, true)];
      this.served.set(config, pair);
    }
    return pair[killed ? 1 : 0];
  }

  private tracker(org: string): Promise<HistoryTracker> {
    let tracker = this.trackers.get(org);
    if (!tracker) {
      const cacheFile = this.options.cacheDir && ORG_NAME.test(org) ? join(this.options.cacheDir, `${org}.json`) : undefined;
      tracker = this.options.repos
        .get(org)
        .then((repo) => HistoryTracker.open({ repo, logger: this.logger, ...(cacheFile ? { cacheFile } : {}) }));
      this.trackers.set(org, tracker);
      const failed = tracker;
      failed.catch(() => {
        if (this.trackers.get(org) === failed) this.trackers.delete(org);
      });
    }
    return tracker;
  }
}
