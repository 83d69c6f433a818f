import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { removeLeftoverRefLocks } from '../../src/foundations/storage/git/refs.js';
import { FlagRepository, parseCommitMessage, readFlagopsTrailers } from '../../src/foundations/storage/index.js';
import { flagYaml, git, meta, projectYaml, tempDir, track } from '../storage/helpers.js';

// A crash (SIGKILL) at any moment of the scheduler's work — before a step's commit, between its commit and main
// moving, right after — never applies a step twice and never loses one. Real processes on the wall clock.

const FLAGS = 120;
const FIXTURE = resolve('test/schedule/fixtures/scheduler-process.mjs');
const iso = (ms: number) => new Date(ms).toISOString();

function config(steps: Array<[number, number]>): string {
  const schedule = steps.map(([at, pct]) => `  - at: ${iso(at)}\n    set:\n      rolloutPct: ${pct}\n`).join('');
  return `enabled: true\nrolloutPct: 0\nvalueOn: true\nvalueOff: false\nversion: 1\nrules: []\nschedule:\n${schedule}`;
}

/** A small deterministic random sequence, so a failing run can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function startProcess(gitdir: string): { child: ChildProcess; exited: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, [FIXTURE, gitdir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
    child.on('exit', (code) => done({ code, stdout, stderr })),
  );
  return { child, exited };
}

describe('the scheduler killed at random moments', () => {
  it('applies every step exactly once in the end, with two processes at a time', async () => {
    const gitdir = join(tempDir(), 'r.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true }));
    const now = Date.now();
    // Three steps per flag overdue in prod; one in dev that falls due while the processes are being killed.
    const devDue = now + 3_000;
    const changes = [{ path: layout.projectFile('shop'), content: projectYaml('shop') }];
    for (let i = 0; i < FLAGS; i++) {
      const key = `f${i}`;
      changes.push({ path: layout.flagFile('shop', key), content: flagYaml(key) });
      changes.push({
        path: layout.configFile('shop', 'prod', key),
        content: config([
          [now - 3_000, 10],
          [now - 2_000, 20],
          [now - 1_000, 30],
        ]),
      });
      changes.push({ path: layout.configFile('shop', 'dev', key), content: config([[devDue, 50]]) });
      changes.push({ path: layout.configFile('shop', 'staging', key), content: config([[now + 3_600_000, 5]]) });
    }
    await repo.update(() => ({ changes, meta: meta('project_create', { project: 'shop' }), result: undefined }));
    await repo.close();

    const next = random(14);
    for (let round = 0; round < 6; round++) {
      const running = [startProcess(gitdir), startProcess(gitdir)];
      await new Promise((done) => setTimeout(done, 150 + next() * 2_500));
      for (const { child } of running) child.kill('SIGKILL');
      await Promise.all(running.map((r) => r.exited));
      // What the next start does: locks left by a process killed while holding them are removed.
      await removeLeftoverRefLocks(gitdir, 0);
    }
    await new Promise((done) => setTimeout(done, Math.max(0, devDue + 200 - Date.now())));
    const last = startProcess(gitdir);
    const { code, stdout, stderr } = await last.exited;
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('settled');

    const applied = new Map<string, number>();
    for (const oid of git(gitdir, 'rev-list', 'main').split('\n')) {
      const trailers = readFlagopsTrailers(parseCommitMessage(git(gitdir, 'log', '-1', '--format=%B', oid)).trailers);
      if (trailers?.action !== 'scheduled_change') continue;
      const id = `${trailers.flag} ${trailers.environment}`;
      applied.set(id, (applied.get(id) ?? 0) + 1);
    }
    const reopened = track(await FlagRepository.open({ gitdir }));
    const flags = (await reopened.readState()).state.projects.get('shop')!.flags;
    for (let i = 0; i < FLAGS; i++) {
      const { prod, dev, staging } = flags.get(`f${i}`)!.environments;
      expect([applied.get(`f${i} prod`), applied.get(`f${i} dev`), applied.get(`f${i} staging`)]).toEqual([3, 1, undefined]);
      expect([prod.rolloutPct, prod.version, prod.schedule]).toEqual([30, 4, undefined]);
      expect([dev.rolloutPct, dev.version, dev.schedule]).toEqual([50, 2, undefined]);
      expect(staging.schedule).toHaveLength(1);
    }
    // Commits a killed or outrun process wrote but never moved main to are dangling, nothing worse.
    expect(git(gitdir, 'fsck', '--full', '--strict', '--no-dangling', '--no-progress')).toBe('');
  }, 120_000);
});
