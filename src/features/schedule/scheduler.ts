import type { Logger } from '../../foundations/log/logger.js';
import type { FlagRepository, SeriesChange } from '../../foundations/storage/index.js';
import type { GuardMonitor } from '../guards/guard-monitor.js';
import type { Clock, ClockTimer } from './clock.js';
import { DueIndex } from './due-index.js';
import { type AppliedStep, stepChange } from './schedule-steps.js';

/** After a failed run (the lock on main held, the git remote unreachable), try again this much later. */
const RETRY_MS = 2_000;

export interface SchedulerOptions {
  org: string;
  repo: FlagRepository;
  clock: Clock;
  logger: Logger;
  /** Guarded steps: checked before they are applied, and watched while their rollout runs. */
  guards?: GuardMonitor;
}

/**
 * Applies one organisation's scheduled steps when they fall due. It keeps a DueIndex current from what main
 * serves (each move of main), sleeps until the earliest step and then applies every step due at that moment
 * in one FlagRepository.updateSeries: one commit per step, main moved once. Steps that fell due while the
 * service was stopped are due at `start`.
 *
 * Exactly once: a step is removed from the file by the commit that applies (or skips) it, and each commit is
 * made only if the step is still the first of its schedule on the head it commits on (compare-and-swap; in
 * remote mode the push to the remote is the swap). Two control planes, or this one after a crash, find the
 * step gone and make no commit.
 */
export class Scheduler {
  private readonly index = new DueIndex();
  private timer: ClockTimer | undefined;
  private running: Promise<void> | undefined;
  private indexing: Promise<void> = Promise.resolve();
  private unsubscribe: (() => void) | undefined;
  private stopped = false;
  /** After a run that left a due step unapplied, due steps wait until then (ms), so a failure is not retried in a loop. */
  private retryAt = 0;

  constructor(private readonly options: SchedulerOptions) {}

  /** Indexes main's head, applies what is due and follows main from then on. */
  async start(): Promise<void> {
    this.unsubscribe = this.options.repo.onMainMoved(() => void this.reindex());
    await this.reindex();
    await this.run();
  }

  /** Stops the timer; a run in progress finishes (its commits are whole either way). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.timer?.cancel();
    await this.running;
    await this.options.guards?.stop();
  }

  /** Resolves once the index holds main's head and every step due by now has been applied. */
  async settle(): Promise<void> {
    await this.reindex();
    await this.run();
  }

  /** How many flag environments have a schedule (served, not held back). */
  get scheduled(): number {
    return this.index.size;
  }

  private reindex(): Promise<void> {
    const next = this.indexing.then(async () => {
      if (this.stopped) return;
      try {
        this.index.update(await this.options.repo.readServed());
        this.options.guards?.watch(this.index.schedules());
      } catch (err) {
        this.options.logger.warn('reading schedules failed', { org: this.options.org, err });
      }
      this.arm();
    });
    this.indexing = next;
    return next;
  }

  private arm(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.stopped || this.running) return;
    const earliest = this.index.earliest();
    if (earliest === undefined) return;
    const at = Math.max(earliest, this.retryAt);
    this.timer = this.options.clock.setTimer(() => void this.run(), at - this.options.clock.now().getTime());
  }

  /** Applies every step due now; one run at a time. */
  private run(): Promise<void> {
    this.running ??= this.applyDue().finally(() => {
      this.running = undefined;
      this.arm();
    });
    return this.running;
  }

  private async applyDue(): Promise<void> {
    if (this.stopped) return;
    const now = this.options.clock.now();
    const due = this.index.due(now.getTime());
    if (due.length === 0) return;
    let unapplied = false;
    const perEntry = await Promise.all(
      due.map(async (entry) => {
        const changes: SeriesChange<AppliedStep>[] = [];
        for (const step of entry.steps) {
          if (Date.parse(step.at) > now.getTime()) break;
          let seen: { value: number; text: string } | undefined;
          // A guarded step is applied only once its check passes; a failing one stops the rollout instead.
          if (step.guard && this.options.guards) {
            const check = await this.options.guards.checkDue(entry, step).catch((err: Error) => {
              this.options.logger.warn('checking a guarded step failed', { org: this.options.org, err: err.message });
              return { kind: 'wait' } as const;
            });
            if (check.kind === 'wait') unapplied = true;
            if (check.kind !== 'pass') break;
            seen = check.seen;
          }
          changes.push((current) => stepChange(current, entry, step, now, seen));
        }
        return changes;
      }),
    );
    const changes = perEntry.flat();
    try {
      const { outcomes } = changes.length === 0 ? { outcomes: [] } : await this.options.repo.updateSeries(changes);
      for (const outcome of outcomes) {
        if (outcome.committed) {
          const { slug, key, env, step, skipped } = outcome.result;
          this.options.logger.info(skipped ? 'scheduled step skipped (flag killed)' : 'scheduled step applied', {
            org: this.options.org,
            project: slug,
            flag: key,
            environment: env,
            at: step.at,
            commit: outcome.commit,
          });
          continue;
        }
        unapplied = true;
        if (outcome.error) this.options.logger.warn('a scheduled step could not be applied', { org: this.options.org, err: outcome.error });
      }
    } catch (err) {
      unapplied = true;
      this.options.logger.warn('applying scheduled steps failed; trying again shortly', { org: this.options.org, err });
    }
    // A step not applied (its commit failed, or the index ran ahead of main) is looked at again a little later.
    if (unapplied) this.retryAt = this.options.clock.now().getTime() + RETRY_MS;
    // The commits moved main: the index follows (onMainMoved) before the next run is armed.
    await this.indexing;
  }
}
