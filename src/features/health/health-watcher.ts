import type { ProjectState } from '@flagops/core';
import { type Logger, silentLogger } from '../../foundations/log/logger.js';
import type { FlagHealth } from './decide-health.js';
import { DEFAULT_STALE_AFTER_DAYS, type FlagHealthService } from './flag-health-service.js';

/** What the watcher needs of time: the service's clock (tests move it by hand). */
export interface WatchClock {
  now(): Date;
  setTimer(fn: () => void, ms: number): { cancel(): void };
}

/** One flag's health with where it is, as the watcher hands it on. */
export interface WatchedFlag extends FlagHealth {
  projectSlug: string;
}

export interface HealthWatcherOptions {
  health: FlagHealthService;
  /** The organisations to watch, asked at each check. */
  orgs(): string[];
  /** What main serves now in an organisation: its projects. */
  projects(org: string): Promise<Iterable<ProjectState>>;
  clock: WatchClock;
  /** Called after each organisation's check with every active flag's health (transitions are the caller's to find). */
  onChecked?(org: string, flags: readonly WatchedFlag[]): Promise<void>;
  /** How often every organisation is checked; default 5 minutes. */
  intervalMs?: number;
  logger?: Logger;
}

const DEFAULT_INTERVAL_MS = 5 * 60_000;

/**
 * Checks the health of every flag of every organisation now and then (staleness comes with time, not only
 * with commits), for the `flagops_flags` gauge and the webhooks that tell when a flag became stale or expired.
 * Checks run one at a time, in the background, each after the last has finished.
 */
export class HealthWatcher {
  private counts: Array<{ org: string; project: string; status: string; count: number }> = [];
  private timer: { cancel(): void } | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly logger: Logger;

  constructor(private readonly options: HealthWatcherOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  /** Checks now, then every interval. */
  start(): void {
    this.schedule(0);
  }

  /** The counts per organisation, project and status of the last check (for /metrics). */
  statusCounts(): ReadonlyArray<{ org: string; project: string; status: string; count: number }> {
    return this.counts;
  }

  /** One check of every organisation now (after the one under way, if any); resolves when done. */
  check(): Promise<void> {
    const run = (this.running ?? Promise.resolve()).then(() => this.checkAll());
    // What the next check waits for: the end of this one, failed or not (its failure is the caller's to see).
    const settled: Promise<void> = run
      .then(
        () => {},
        () => {},
      )
      .finally(() => {
        if (this.running === settled) this.running = undefined;
      });
    this.running = settled;
    return run;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimer(() => {
      this.check()
        .catch((err) => this.logger.warn('checking flag health failed; the next check tries again', { err }))
        .finally(() => this.schedule(this.options.intervalMs ?? DEFAULT_INTERVAL_MS));
    }, ms);
  }

  private async checkAll(): Promise<void> {
    const counts: typeof this.counts = [];
    for (const org of this.options.orgs()) {
      if (this.stopped) return;
      const flags: WatchedFlag[] = [];
      for (const project of await this.options.projects(org)) {
        const report = await this.options.health.report({
          org,
          project,
          now: this.options.clock.now().getTime(),
          staleAfterDays: DEFAULT_STALE_AFTER_DAYS,
        });
        const slug = project.project.slug;
        for (const status of ['active', 'potentially_stale', 'stale'])
          counts.push({ org, project: slug, status, count: report.filter((f) => f.status === status).length });
        for (const flag of report) flags.push({ ...flag, projectSlug: slug });
      }
      await this.options.onChecked?.(org, flags);
    }
    this.counts = counts;
  }
}
