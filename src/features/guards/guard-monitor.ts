import { createHash } from 'node:crypto';
import { canonicalJson, GUARD_DEFAULT_INTERVAL_SECONDS, type ScheduleGuard, type ScheduleStep } from '@flagops/core';
import { FlagopsError } from '../../foundations/errors/kinds.js';
import type { Logger } from '../../foundations/log/logger.js';
import type { GuardFamilies, GuardSeries, GuardStopReason } from '../../foundations/metrics/guard-families.js';
import { failuresAfter, type GuardCheck, type GuardCheckOutcome, type GuardStore } from '../../foundations/state/index.js';
import type { FlagRepository } from '../../foundations/storage/index.js';
import type { KillSwitch } from '../kill/kill-switch.js';
import type { Clock, ClockTimer } from '../schedule/clock.js';
import { holdsGuardedStep, type StepTarget } from '../schedule/schedule-steps.js';
import { GUARD_ACTOR, removeStepsChange } from './guard-stop.js';
import { type GuardVerdict, judge, stopReason } from './guard-verdict.js';
import { type QueryOutcome, queryPrometheus } from './prometheus-query.js';

/**
 * How long a check is held by the control plane that took it while its query runs (5 s at most) and its result
 * is recorded, should it crash before it ends: no other control plane queries that guard meanwhile.
 */
const CHECK_CLAIM_MS = 15_000;
/** A periodic check is claimed for most of its interval, so that timers firing a little early elsewhere do not run it twice. */
const CLAIM_SHARE = 0.9;

export interface GuardMonitorOptions {
  org: string;
  repo: FlagRepository;
  clock: Clock;
  logger: Logger;
  store: GuardStore;
  killSwitch: KillSwitch;
  /** FLAGOPS_PROMETHEUS_URL; absent: every query fails (the guard counts as failing). */
  prometheusUrl?: string;
  /**
   * Remote mode: brings main up to the git remote (true when it reached it), so that a stop is decided on what
   * every control plane committed: a schedule cancelled on another one a moment ago is not stopped here.
   */
  catchUp?: (org: string) => Promise<boolean>;
  /**
   * Whether the shared state (the database) cannot be reached now: the guards are then checked here without a
   * claim, each control plane on its own, rather than not at all.
   */
  sharedStateDown?: () => boolean;
  /** Counts the checks this control plane runs and the rollouts it stops; absent with metrics off. */
  metrics?: Pick<GuardFamilies, 'countCheck' | 'countStop'>;
}

/** A schedule of one flag in one environment, as served: its steps, oldest first. */
export interface GuardedSchedule extends StepTarget {
  steps: readonly ScheduleStep[];
}

/** What the check of a due guarded step decided for the scheduler. */
export type DueCheck =
  | { kind: 'pass'; seen: { value: number; text: string } }
  /** The rollout was stopped (or is being stopped elsewhere): the step is not applied. */
  | { kind: 'stopped' }
  /** Not settled now (another control plane is checking it, or the query failed fewer than 3 times): try again shortly. */
  | { kind: 'wait' };

interface Watched {
  target: StepTarget;
  /** The guarded step watched: the first step of the schedule that carries a guard. */
  step: ScheduleStep;
  guard: ScheduleGuard;
  /** `<target>@<at>#<guard>`: the claim of its periodic checks, the same on every control plane. */
  claim: string;
  nextAt: number;
  /** A periodic check of it runs: the next one is due an interval after it ends, not while it runs. */
  checking: boolean;
}

/** A rollout whose guard failed and whose flag was killed, its remaining steps not removed yet. */
interface UnfinishedStop {
  /** The watched guard's claim: a schedule changed since is not the one stopped. */
  claim: string;
  reason: string;
  kind: GuardStopReason;
}

/** A check whose result counts: the verdict, and why the rollout stops (null: it goes on). */
interface Checked {
  verdict: GuardVerdict;
  reason: string | null;
}

export const targetId = (t: StepTarget) => `${t.slug}/${t.key}/${t.env}`;

/**
 * Watches one organisation's guarded rollouts. While a schedule has a step with a guard, the guard of the
 * first such step is checked every intervalSeconds (at once when it is written), and again when that step
 * falls due (the scheduler asks, checkDue). A value above max or below min, or 3 failed queries in a row,
 * stops the rollout: the flag is killed in that environment through the kill fast path and the remaining
 * steps are removed, both commits with audit action guard_failed and the query, value and bound as reason.
 * One query of a guard runs at a time, the next an interval after it ended; a result counts only while main
 * still has the step and guard it was asked for (a cancelled, replaced, applied or stopped one's is dropped).
 *
 * Once across control planes: each check is claimed in the shared state before its query runs (GuardStore),
 * so one control plane runs it; the count of failed queries is kept there too. The stop is a kill and a
 * compare-and-swap commit, which a second control plane finds made and does not make again. While the shared
 * state cannot be reached, each control plane checks the guards itself (counting failed queries itself): a
 * guard does not stop watching because the database is down, and its kill needs no database.
 */
export class GuardMonitor {
  private readonly watched = new Map<string, Watched>();
  private timer: ClockTimer | undefined;
  private stopped = false;
  private readonly checking = new Set<Promise<void>>();
  private readonly stopping = new Map<string, Promise<void>>();
  /** The query of each guard in flight here, by `<target>@<at>#<guard>`. */
  private readonly querying = new Map<string, Promise<QueryOutcome>>();
  /** Stops whose kill was made (or found made) and whose steps are still to be removed, by target. */
  private readonly unfinished = new Map<string, UnfinishedStop>();
  /** The last check of each target made while the shared state could not be reached, by target. */
  private readonly checkedHere = new Map<string, GuardCheck>();

  constructor(private readonly options: GuardMonitorOptions) {}

  /** Brings the watched guards up to the served schedules (the scheduler calls it on every move of main). */
  watch(schedules: Iterable<GuardedSchedule>): void {
    if (this.stopped) return;
    const now = this.options.clock.now().getTime();
    const seen = new Set<string>();
    for (const schedule of schedules) {
      const step = schedule.steps.find((s) => s.guard !== undefined);
      if (!step?.guard) continue;
      const id = targetId(schedule);
      seen.add(id);
      // Claimed per step and guard: a guard changed since is checked at once, not when the old one's claim runs out.
      const claim = `${id}@${step.at}#${guardDigest(step.guard)}`;
      // The same guard keeps its next check (and the check of it that runs).
      if (this.watched.get(id)?.claim === claim) continue;
      const target = { slug: schedule.slug, key: schedule.key, env: schedule.env };
      // A guard just written (or changed) is checked at once: a rollout that is bad already stops before its next step.
      this.watched.set(id, { target, step, guard: step.guard, claim, nextAt: now, checking: false });
    }
    const gone = [...this.watched.keys()].filter((id) => !seen.has(id));
    for (const id of gone) {
      this.watched.delete(id);
      this.unfinished.delete(id);
      this.checkedHere.delete(id);
    }
    if (gone.length > 0)
      void this.options.store.remove(this.options.org, gone).catch((err: Error) => this.warn('guard state not cleared', err));
    this.arm();
  }

  /** How many schedules are watched. */
  get size(): number {
    return this.watched.size;
  }

  /** The last check of every watched guard. */
  async lastChecks(): Promise<GuardCheck[]> {
    return this.options.store.list(this.options.org);
  }

  /** Stops the timer; checks in progress finish (a stop they started is whole). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await Promise.all([...this.checking]);
    await Promise.all([...this.stopping.values()]);
  }

  /** The check of a guarded step that is due now, before the scheduler applies it. */
  async checkDue(target: StepTarget, step: ScheduleStep): Promise<DueCheck> {
    const { store, org, clock } = this.options;
    const guard = step.guard!;
    const claim = `${targetId(target)}@${step.at}`;
    const now = clock.now().getTime();
    if (!(await store.claim(org, claim, now, now + CHECK_CLAIM_MS))) return { kind: 'wait' };
    const checked = await this.check(target, step, guard, 'due');
    const verdict = checked?.verdict;
    if (verdict?.kind === 'pass') return { kind: 'pass', seen: { value: verdict.value, text: verdict.text } };
    if (verdict && checked?.reason) {
      await this.stopRollout(target, step, checked.reason, stopKind(verdict), `${targetId(target)}@${step.at}#${guardDigest(guard)}`);
      return { kind: 'stopped' };
    }
    await store.release(org, claim).catch(() => undefined);
    return { kind: 'wait' };
  }

  private arm(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.stopped || this.watched.size === 0) return;
    let earliest = Number.POSITIVE_INFINITY;
    for (const w of this.watched.values()) if (!w.checking) earliest = Math.min(earliest, w.nextAt);
    // Every guard is being checked: the end of each check arms the timer again.
    if (earliest === Number.POSITIVE_INFINITY) return;
    this.timer = this.options.clock.setTimer(() => this.tick(), earliest - this.options.clock.now().getTime());
  }

  private tick(): void {
    if (this.stopped) return;
    const now = this.options.clock.now().getTime();
    for (const w of this.watched.values()) {
      if (w.checking || w.nextAt > now) continue;
      // One check of a guard at a time: a query that hangs (up to its timeout) is not joined by the next ones.
      w.checking = true;
      const run = this.periodic(w, now).finally(() => {
        w.checking = false;
        w.nextAt = this.options.clock.now().getTime() + intervalOf(w.guard);
        this.checking.delete(run);
        this.arm();
      });
      this.checking.add(run);
    }
    this.arm();
  }

  private async periodic(w: Watched, now: number): Promise<void> {
    const { store, org, clock } = this.options;
    const intervalMs = intervalOf(w.guard);
    try {
      // The guard failed already and its flag is killed: what is left is removing the steps, not another query.
      const unfinished = this.unfinished.get(targetId(w.target));
      if (unfinished?.claim === w.claim) {
        await this.stopRollout(w.target, w.step, unfinished.reason, unfinished.kind, w.claim);
        return;
      }
      // Held while the query runs, however short the interval: no control plane starts a second query of this guard.
      const claimed = await this.claimUnlessDown(w.claim, now, now + Math.max(intervalMs * CLAIM_SHARE, CHECK_CLAIM_MS));
      if (claimed === 'taken') return;
      try {
        const checked = await this.check(w.target, w.step, w.guard, 'interval');
        if (checked?.reason) await this.stopRollout(w.target, w.step, checked.reason, stopKind(checked.verdict), w.claim);
      } finally {
        // The next check, wherever it runs, comes an interval after this one ended.
        if (claimed === 'claimed')
          await store.hold(org, w.claim, clock.now().getTime() + intervalMs * CLAIM_SHARE).catch((err: unknown) => {
            if (!unreachable(err)) throw err;
          });
      }
    } catch (err) {
      this.warn('guard check failed', err as Error, w.target);
    }
  }

  /**
   * Claims a periodic check in the shared state: 'taken' when another control plane runs it, 'alone' when the
   * shared state cannot be reached (the check runs here regardless: a kill needs no database, and a second one
   * made elsewhere finds the flag killed).
   */
  private async claimUnlessDown(claim: string, now: number, until: number): Promise<'claimed' | 'taken' | 'alone'> {
    if (this.options.sharedStateDown?.()) return 'alone';
    try {
      return (await this.options.store.claim(this.options.org, claim, now, until)) ? 'claimed' : 'taken';
    } catch (err) {
      if (unreachable(err)) return 'alone';
      throw err;
    }
  }

  /** Records a check in the shared state; while that cannot be reached, here (failed queries counted here). */
  private async record(target: StepTarget, outcome: GuardCheckOutcome): Promise<GuardCheck> {
    const id = targetId(target);
    if (!this.options.sharedStateDown?.()) {
      try {
        const shared = await this.options.store.record(id, outcome);
        this.checkedHere.delete(id);
        return shared;
      } catch (err) {
        if (!unreachable(err)) throw err;
      }
    }
    const check: GuardCheck = { ...outcome, failures: failuresAfter(this.checkedHere.get(id), outcome) };
    this.checkedHere.set(id, check);
    return check;
  }

  /**
   * Runs the query, records what it saw (and the count of failed queries), logs it. Null when the result came
   * back for a guard no longer watched (its step applied, its schedule cancelled, replaced or stopped while the
   * query ran): it is dropped, neither recorded nor counted, and stops nothing.
   */
  private async check(target: StepTarget, step: ScheduleStep, guard: ScheduleGuard, when: 'interval' | 'due'): Promise<Checked | null> {
    const { org, logger, clock, metrics } = this.options;
    const guardId = guardDigest(guard);
    const outcome = await this.query(`${targetId(target)}@${step.at}#${guardId}`, guard.query);
    const fields = { org, project: target.slug, flag: target.key, environment: target.env, step: step.at, query: guard.query, when };
    if (!(await this.stillGuarded(target, step))) {
      logger.info('late guard check dropped: its guard is no longer watched', fields);
      return null;
    }
    const verdict = judge(guard, outcome);
    // Counted here, where the query ran: a check claimed by another control plane is counted there.
    metrics?.countCheck(this.series(target), verdict.kind);
    const record = await this.record(target, {
      org,
      project: target.slug,
      flag: target.key,
      environment: target.env,
      stepAt: step.at,
      query: guard.query,
      guardId,
      checkedAt: clock.now().toISOString(),
      result: verdict.kind,
      ...(verdict.kind === 'error' ? { error: verdict.error } : { value: verdict.value }),
    });
    if (verdict.kind === 'pass') logger.debug('guard passed', { ...fields, value: verdict.value });
    else if (verdict.kind === 'breach') logger.warn('guard breached', { ...fields, value: verdict.value, max: guard.max, min: guard.min });
    else logger.warn('guard query failed', { ...fields, error: verdict.error, failures: record.failures });
    return { verdict, reason: stopReason(verdict, record.failures) };
  }

  /** Runs a guard's query, one at a time per guard here: a due check waits for a periodic one in flight. */
  private async query(guardKey: string, query: string): Promise<QueryOutcome> {
    for (let running = this.querying.get(guardKey); running; running = this.querying.get(guardKey)) await running.catch(() => undefined);
    const run = queryPrometheus(this.options.prometheusUrl, query);
    this.querying.set(guardKey, run);
    try {
      return await run;
    } finally {
      if (this.querying.get(guardKey) === run) this.querying.delete(guardKey);
    }
  }

  /** Whether main still has the guarded step `step` (same time, same guard): what its check decides counts. */
  private async stillGuarded(target: StepTarget, step: ScheduleStep): Promise<boolean> {
    const { state } = await this.options.repo.readServed();
    return holdsGuardedStep(state.projects.get(target.slug)?.flags.get(target.key)?.environments[target.env].schedule, step);
  }

  /** Kills the flag there (fast path) and removes the remaining steps; one stop at a time per schedule. */
  private stopRollout(target: StepTarget, step: ScheduleStep, reason: string, kind: GuardStopReason, claim: string): Promise<void> {
    const id = targetId(target);
    const running = this.stopping.get(id);
    if (running) return running;
    const run = this.stopNow(target, step, { claim, reason, kind }).finally(() => this.stopping.delete(id));
    this.stopping.set(id, run);
    return run;
  }

  private async stopNow(target: StepTarget, step: ScheduleStep, stop: UnfinishedStop): Promise<void> {
    const { org, repo, killSwitch, logger } = this.options;
    const { reason, kind } = stop;
    const id = targetId(target);
    const fields = { org, project: target.slug, flag: target.key, environment: target.env, reason };
    try {
      // Decided again on main as it is now: a rollout stopped already, or replaced since the check, is not stopped (again).
      await this.options.catchUp?.(org).catch(() => false);
      if (!(await this.stillGuarded(target, step))) {
        this.unfinished.delete(id);
        logger.info('guard stop not made: its guard is no longer watched', fields);
        return;
      }
      const kill = await killSwitch.kill({
        org,
        repo,
        projectSlug: target.slug,
        flagKey: target.key,
        environment: target.env,
        actor: GUARD_ACTOR,
        reason,
        action: 'guard_failed',
      });
      // Until the steps are removed, each interval tries that again (a git remote or database out of reach).
      this.unfinished.set(id, stop);
      const { outcomes } = await repo.updateSeries([(current) => removeStepsChange(current, target, step, reason)]);
      this.unfinished.delete(id);
      const removed = outcomes[0]?.committed ? outcomes[0] : undefined;
      // The removal is one compare-and-swap commit, made once whichever control plane (or check) tries, and is on
      // the git remote in remote mode once committed: a stop counts where it was made, not again where a second
      // attempt found the steps gone.
      if (!removed) {
        logger.info('guarded rollout stopped already: its steps were removed', {
          ...fields,
          killCommit: kill.commit,
          killed: kill.changed,
        });
        return;
      }
      this.options.metrics?.countStop(this.series(target), kind);
      logger.warn('guarded rollout stopped', {
        ...fields,
        killCommit: kill.commit,
        killed: kill.changed,
        stepsRemoved: removed.result,
        commit: removed.commit,
      });
    } catch (err) {
      // The next check (within its interval) finds the guard failing still and stops the rollout then.
      this.warn('stopping a guarded rollout failed', err as Error, target);
    }
  }

  private series(target: StepTarget): GuardSeries {
    return { org: this.options.org, project: target.slug, environment: target.env, flag: target.key };
  }

  private warn(message: string, err: Error, target?: StepTarget): void {
    this.options.logger.warn(message, {
      org: this.options.org,
      ...(target ? { project: target.slug, flag: target.key, environment: target.env } : {}),
      err: err.message,
    });
  }
}

/** A guard's identity in a claim: the same guard gives the same text on every control plane. */
function guardDigest(guard: ScheduleGuard): string {
  return createHash('sha256').update(canonicalJson(guard)).digest('base64url').slice(0, 16);
}

const intervalOf = (guard: ScheduleGuard): number => (guard.intervalSeconds ?? GUARD_DEFAULT_INTERVAL_SECONDS) * 1000;

const stopKind = (verdict: GuardVerdict): GuardStopReason => (verdict.kind === 'breach' ? 'breach' : 'errors');

/** Whether a shared-state call failed because the database cannot be reached (not for a mistake in what was asked). */
const unreachable = (err: unknown): boolean => err instanceof FlagopsError && err.code === 'unavailable';
