import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EnvironmentName } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/features/schedule/scheduler.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository, parseCommitMessage, readFlagopsTrailers } from '../../src/foundations/storage/index.js';
import { git, meta, pushFromOutside, seedShop, tempDir, track } from '../storage/helpers.js';
import { ManualClock } from './manual-clock.js';

const T0 = Date.parse('2026-11-24T09:00:00Z');
const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

function configText(rolloutPct: number, version: number, steps: Array<[number, string]> = [], enabled = true): string {
  const schedule = steps.length === 0 ? '' : `schedule:\n${steps.map(([at, set]) => `  - at: ${iso(at)}\n    set: { ${set} }\n`).join('')}`;
  return `enabled: ${enabled}\nrolloutPct: ${rolloutPct}\nvalueOn: true\nvalueOff: false\nversion: ${version}\nrules: []\n${schedule}`;
}

async function setup(steps: Array<[number, string]>, options: { key?: string; env?: EnvironmentName } = {}) {
  const gitdir = join(tempDir(), 'r.git');
  const repo = track(await FlagRepository.open({ gitdir, create: true }));
  await seedShop(repo);
  await repo.update(() => ({
    changes: [{ path: layout.configFile('shop', options.env ?? 'prod', options.key ?? 'a'), content: configText(5, 2, steps) }],
    meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
    result: undefined,
  }));
  return { gitdir, repo };
}

const started: Scheduler[] = [];
async function startScheduler(repo: FlagRepository, clock: ManualClock): Promise<Scheduler> {
  const scheduler = new Scheduler({ org: 'acme', repo, clock, logger: silentLogger });
  started.push(scheduler);
  await scheduler.start();
  return scheduler;
}

async function prod(repo: FlagRepository, key = 'a') {
  return (await repo.readState()).state.projects.get('shop')!.flags.get(key)!.environments.prod;
}

/** The scheduler's commits on main, oldest first: action, actor type, flag and environment. */
function schedulerCommits(gitdir: string): string[] {
  const oids = git(gitdir, 'rev-list', '--reverse', 'main').split('\n');
  return oids.flatMap((oid) => {
    const trailers = readFlagopsTrailers(parseCommitMessage(git(gitdir, 'log', '-1', '--format=%B', oid)).trailers);
    if (trailers?.actor.type !== 'scheduler') return [];
    return [`${trailers.action} ${trailers.flag} ${trailers.environment} by ${trailers.actor.name}`];
  });
}

/** Lets the run the clock started finish. */
async function settled(scheduler: Scheduler): Promise<void> {
  await scheduler.settle();
}

describe('the scheduler', () => {
  it('applies a step when it falls due, as one commit that sets its fields, removes it and increments version', async () => {
    const { gitdir, repo } = await setup([
      [T0 + 10 * MINUTE, 'rolloutPct: 25'],
      [T0 + 70 * MINUTE, 'rolloutPct: 100'],
    ]);
    const clock = new ManualClock(T0);
    const scheduler = await startScheduler(repo, clock);
    expect(scheduler.scheduled).toBe(1);
    clock.advance(10 * MINUTE - 1);
    await settled(scheduler);
    expect((await prod(repo)).rolloutPct).toBe(5);
    clock.advance(1);
    await settled(scheduler);
    expect(await prod(repo)).toMatchObject({
      rolloutPct: 25,
      version: 3,
      schedule: [{ at: iso(T0 + 70 * MINUTE), set: { rolloutPct: 100 } }],
    });
    expect(schedulerCommits(gitdir)).toEqual(['scheduled_change a prod by scheduler']);
    const summary = git(gitdir, 'log', '-1', '--format=%s%n%b', 'main');
    expect(summary).toContain('scheduled step of a in prod: rollout 25 %');
    expect(summary).toContain(`step due at ${iso(T0 + 10 * MINUTE)}`);
    clock.advance(60 * MINUTE);
    await settled(scheduler);
    const config = await prod(repo);
    expect(config).toMatchObject({ rolloutPct: 100, version: 4 });
    expect(config.schedule).toBeUndefined();
    expect(schedulerCommits(gitdir)).toHaveLength(2);
    expect(scheduler.scheduled).toBe(0);
    expect(clock.pending).toBe(0);
    await scheduler.stop();
  });

  it('skips a step that falls due while the flag is killed in that environment, in its own commit, and never applies it later', async () => {
    const { gitdir, repo } = await setup([[T0 + MINUTE, 'enabled: false, rolloutPct: 50']]);
    await repo.update(() => ({
      changes: [
        { path: layout.killsFile('shop', 'prod'), content: 'kills:\n  a:\n    killedAt: 2026-11-24T08:00:00Z\n    killedBy: ops\n' },
      ],
      meta: meta('kill', { project: 'shop', flag: 'a', environment: 'prod' }),
      result: undefined,
    }));
    const clock = new ManualClock(T0);
    const scheduler = await startScheduler(repo, clock);
    clock.advance(MINUTE);
    await settled(scheduler);
    const config = await prod(repo);
    expect(config).toMatchObject({ enabled: true, rolloutPct: 5, version: 3 });
    expect(config.schedule).toBeUndefined();
    expect(schedulerCommits(gitdir)).toEqual(['scheduled_change_skipped a prod by scheduler']);
    await repo.update(() => ({
      changes: [{ path: layout.killsFile('shop', 'prod'), content: 'kills: {}\n' }],
      meta: meta('clear_kill', { project: 'shop', flag: 'a', environment: 'prod' }),
      result: undefined,
    }));
    clock.advance(60 * MINUTE);
    await settled(scheduler);
    expect(await prod(repo)).toMatchObject({ enabled: true, rolloutPct: 5, version: 3 });
    expect(schedulerCommits(gitdir)).toHaveLength(1);
    await scheduler.stop();
  });

  it('applies at start, in order and one commit each, the steps that fell due while it was stopped', async () => {
    const { gitdir, repo } = await setup([
      [T0 - 3 * MINUTE, 'rolloutPct: 10'],
      [T0 - 2 * MINUTE, 'rolloutPct: 20'],
      [T0 - MINUTE, 'rolloutPct: 30'],
      [T0 + MINUTE, 'rolloutPct: 40'],
    ]);
    const scheduler = await startScheduler(repo, new ManualClock(T0));
    expect(await prod(repo)).toMatchObject({ rolloutPct: 30, version: 5, schedule: [{ set: { rolloutPct: 40 } }] });
    expect(schedulerCommits(gitdir)).toHaveLength(3);
    const rollouts = git(gitdir, 'log', '--format=%s', '-3', 'main').split('\n').reverse();
    expect(rollouts).toEqual(['rollout 10 %', 'rollout 20 %', 'rollout 30 %'].map((r) => `scheduled step of a in prod: ${r}`));
    await scheduler.stop();
  });

  it('applies each step once with two schedulers on one repository', async () => {
    const steps: Array<[number, string]> = [
      [T0 + MINUTE, 'rolloutPct: 10'],
      [T0 + 2 * MINUTE, 'rolloutPct: 20'],
    ];
    const { gitdir, repo } = await setup(steps);
    await repo.update(() => ({
      changes: [{ path: layout.configFile('shop', 'dev', 'b'), content: configText(0, 2, steps) }],
      meta: meta('config_update', { project: 'shop', flag: 'b', environment: 'dev' }),
      result: undefined,
    }));
    const other = track(await FlagRepository.open({ gitdir }));
    const clock = new ManualClock(T0);
    const first = await startScheduler(repo, clock);
    const second = await startScheduler(other, clock);
    clock.advance(2 * MINUTE);
    await Promise.all([settled(first), settled(second)]);
    await other.refresh();
    await repo.refresh();
    await Promise.all([settled(first), settled(second)]);
    expect(schedulerCommits(gitdir).sort()).toEqual([
      'scheduled_change a prod by scheduler',
      'scheduled_change a prod by scheduler',
      'scheduled_change b dev by scheduler',
      'scheduled_change b dev by scheduler',
    ]);
    expect(await prod(repo)).toMatchObject({ rolloutPct: 20, version: 4 });
    await Promise.all([first.stop(), second.stop()]);
  });

  it('follows schedules pushed from outside, and leaves a held-back flag’s steps until its files are valid again', async () => {
    const { gitdir, repo } = await setup([]);
    await repo.watch();
    const clock = new ManualClock(T0);
    const scheduler = await startScheduler(repo, clock);
    expect(scheduler.scheduled).toBe(0);
    const pushed = configText(5, 3, [[T0 + MINUTE, 'rolloutPct: 50']]);
    pushFromOutside(gitdir, (checkout) => {
      writeFileSync(join(checkout, layout.configFile('shop', 'prod', 'a')), pushed);
      writeFileSync(join(checkout, layout.configFile('shop', 'dev', 'a')), 'enabled: maybe\n');
    });
    await repo.refresh();
    await settled(scheduler);
    expect(scheduler.scheduled).toBe(0);
    clock.advance(5 * MINUTE);
    await settled(scheduler);
    expect(schedulerCommits(gitdir)).toEqual([]);
    pushFromOutside(gitdir, (checkout) => writeFileSync(join(checkout, layout.configFile('shop', 'dev', 'a')), configText(0, 1)));
    await repo.refresh();
    await settled(scheduler);
    expect(schedulerCommits(gitdir)).toEqual(['scheduled_change a prod by scheduler']);
    expect(await prod(repo)).toMatchObject({ rolloutPct: 50, version: 4 });
    await scheduler.stop();
  });
});
