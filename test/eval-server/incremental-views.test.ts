/**
 * What the evaluation server serves after a sequence of changes, each view made from the one before (only
 * the changed flags rebuilt, compiled and serialized), is exactly what a server reading the same commit from
 * scratch serves: the same snapshot bytes and the same evaluations. Flags a change did not touch keep their
 * snapshot entry object, which is what lets consumers find what changed by comparing entries by reference.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ENVIRONMENTS, type EnvironmentName, type EvaluationContext, type SnapshotFlag, setOwn } from '@flagops/core';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { EnvironmentView } from '../../src/apps/eval-server/environment-view.js';
import { OrganisationServing } from '../../src/apps/eval-server/organisation-serving.js';
import { SnapshotHolder } from '../../src/apps/eval-server/snapshot-holder.js';
import { KillSwitch } from '../../src/features/kill/kill-switch.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../src/foundations/repository/serialize-file.js';
import { FlagRepository } from '../../src/foundations/storage/flag-repository.js';
import { actor, commitFiles, projectFiles } from './harness.js';

const ORG = 'acme';
const SLUG = 'shop';
const PROJECT = `prj_${SLUG}`;
const CONTEXTS: EvaluationContext[] = [
  {},
  { userId: 'user-1', attributes: { country: 'DE', plan: 'beta' } },
  { userId: 'user-42', attributes: { country: 'US', plan: 'free' } },
  { userId: 'user-7', attributes: { country: 'FR' } },
];

const config = (rolloutPct: number, extra: Record<string, unknown> = {}) =>
  serializeRepositoryFile({
    kind: 'config',
    value: { enabled: true, rolloutPct, valueOn: true, valueOff: false, version: 1, rules: [], ...extra },
  });
const segment = (userIds: string[]) =>
  serializeRepositoryFile({ kind: 'segment', value: { key: 'beta', version: 1, userIds, conditions: [] } });
const inBeta = { rules: [{ id: 'beta', serve: 'on', conditions: [{ op: 'in_segment', value: 'beta' }] }] };

/** The changes a sequence is made of; `key` picks a flag among those there are. */
type Step =
  | { kind: 'edit'; key: number; env: EnvironmentName; pct: number }
  | { kind: 'add' }
  | { kind: 'delete'; key: number }
  | { kind: 'kill' | 'clear'; key: number; env: EnvironmentName }
  | { kind: 'segment'; users: string[] }
  | { kind: 'break' | 'fix'; key: number; env: EnvironmentName };

const env = fc.constantFrom(...ENVIRONMENTS);
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('edit' as const), key: fc.nat(), env, pct: fc.integer({ min: 0, max: 100 }) }),
  fc.record({ kind: fc.constant('add' as const) }),
  fc.record({ kind: fc.constant('delete' as const), key: fc.nat() }),
  fc.record({ kind: fc.constantFrom('kill' as const, 'clear' as const), key: fc.nat(), env }),
  fc.record({ kind: fc.constant('segment' as const), users: fc.subarray(['user-1', 'user-42', 'user-7']) }),
  fc.record({ kind: fc.constantFrom('break' as const, 'fix' as const), key: fc.nat(), env }),
);

/** A repository, a server following it (incremental), and what a server starting on a commit serves. */
class Scenario {
  private constructor(
    readonly dir: string,
    readonly repo: FlagRepository,
    readonly holder: SnapshotHolder,
    readonly kills: KillSwitch,
  ) {}
  keys = ['a', 'b', 'c', 'd'];
  killed = new Set<string>();
  broken = new Set<string>();
  private added = 0;

  static async start(): Promise<Scenario> {
    const dir = await mkdtemp(path.join(tmpdir(), 'flagops-incremental-'));
    const repo = await FlagRepository.open({ gitdir: path.join(dir, 'repo.git'), create: true, durable: false });
    await commitFiles(repo, [
      ...projectFiles(SLUG, [
        { key: 'a', rolloutPct: 30 },
        { key: 'b', rolloutPct: 0 },
        { key: 'c', rolloutPct: 100, prerequisites: [{ flag: 'a', variation: 'on' }] },
        { key: 'd', rolloutPct: 0, rules: inBeta.rules as never },
      ]),
      { path: layout.segmentFile(SLUG, 'beta'), content: segment(['user-1']) },
    ]);
    const holder = new SnapshotHolder(silentLogger);
    await holder.add(ORG, repo);
    return new Scenario(dir, repo, holder, new KillSwitch(holder));
  }

  async stop(): Promise<void> {
    this.holder.close();
    await this.repo.close();
    await rm(this.dir, { recursive: true, force: true });
  }

  views(): Record<EnvironmentName, EnvironmentView> {
    return Object.fromEntries(ENVIRONMENTS.map((e) => [e, this.holder.view(ORG, PROJECT, e)!])) as Record<EnvironmentName, EnvironmentView>;
  }

  /** Applies a step; returns the flags whose entries it may change (all: '*'). */
  async apply(s: Step): Promise<Set<string> | '*'> {
    const pick = (n: number) => this.keys[n % this.keys.length];
    const kill = (key: string, e: EnvironmentName) => ({
      org: ORG,
      repo: this.repo,
      projectSlug: SLUG,
      flagKey: key,
      environment: e,
      actor,
    });
    switch (s.kind) {
      case 'edit': {
        const key = pick(s.key);
        if (this.broken.has(`${key}/${s.env}`)) return new Set();
        await commitFiles(this.repo, [{ path: layout.configFile(SLUG, s.env, key), content: config(s.pct) }]);
        return new Set([key]);
      }
      case 'add': {
        const key = `new-${this.added++}`;
        const files = projectFiles(SLUG, [{ key, rolloutPct: 50, prerequisites: [{ flag: 'a', variation: 'on' }] }]);
        await commitFiles(
          this.repo,
          files.filter((f) => f.path.includes(`/${key}.yaml`)),
        );
        this.keys.push(key);
        return new Set([key]);
      }
      case 'delete': {
        // Flags that others require, and killed or broken ones, stay: the repository refuses or holds those back.
        const key = pick(s.key);
        if (['a', 'c', 'd'].includes(key) || [...this.killed, ...this.broken].some((k) => k.startsWith(`${key}/`))) return new Set();
        const paths = [layout.flagFile(SLUG, key), ...ENVIRONMENTS.map((e) => layout.configFile(SLUG, e, key))];
        await commitFiles(
          this.repo,
          paths.map((p) => ({ path: p, content: null })),
        );
        this.keys = this.keys.filter((k) => k !== key);
        return new Set([key]);
      }
      case 'kill':
      case 'clear': {
        const key = pick(s.key);
        if (s.kind === 'kill') {
          await this.kills.kill(kill(key, s.env));
          this.killed.add(`${key}/${s.env}`);
        } else {
          await this.kills.clear(kill(key, s.env));
          this.killed.delete(`${key}/${s.env}`);
        }
        return new Set();
      }
      case 'segment':
        await commitFiles(this.repo, [{ path: layout.segmentFile(SLUG, 'beta'), content: segment(s.users) }]);
        return new Set();
      case 'break':
      case 'fix': {
        const key = pick(s.key);
        const content = s.kind === 'break' ? 'enabled: true\nrolloutPct: 250\n' : config(70, { version: 5 });
        await this.push(layout.configFile(SLUG, s.env, key), content);
        if (s.kind === 'break') this.broken.add(`${key}/${s.env}`);
        else this.broken.delete(`${key}/${s.env}`);
        return '*';
      }
    }
  }

  /** An outside push (git's plumbing, as a push would land): the repository refuses to write invalid files itself. */
  private async push(file: string, content: string): Promise<void> {
    const { execFileSync } = await import('node:child_process');
    const gitdir = this.repo.gitdir;
    const git = (args: string[], input?: string) =>
      execFileSync('git', args, {
        cwd: gitdir,
        input,
        encoding: 'utf8',
        env: {
          ...process.env,
          GIT_INDEX_FILE: path.join(this.dir, 'index'),
          GIT_AUTHOR_NAME: 'Erin',
          GIT_AUTHOR_EMAIL: 'erin@example.com',
          GIT_COMMITTER_NAME: 'Erin',
          GIT_COMMITTER_EMAIL: 'erin@example.com',
        },
      }).trim();
    const head = git(['rev-parse', 'refs/heads/main']);
    git(['read-tree', head]);
    const blob = git(['hash-object', '-w', '--stdin'], content);
    git(['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`]);
    const tree = git(['write-tree']);
    const commit = git(['commit-tree', tree, '-p', head, '-m', 'outside push']);
    git(['update-ref', 'refs/heads/main', commit, head]);
  }
}

/** What a server that starts on the current head serves, from scratch. */
async function fromScratch(repo: FlagRepository): Promise<OrganisationServing> {
  const serving = new OrganisationServing(ORG, repo, silentLogger, () => {});
  await serving.reloadToHead();
  return serving;
}

/** The snapshot body serialized whole, as it was before it was assembled from cached fragments. */
function serializedWhole(view: EnvironmentView): string {
  const flags: Record<string, SnapshotFlag> = {};
  for (const key of Object.keys(view.flags))
    setOwn(flags, key, view.killed.has(key) ? { ...view.flags[key], killed: true } : view.flags[key]);
  return JSON.stringify({ version: view.version, environment: view.environment, flags, segments: view.segments });
}

function expectSameAsFresh(view: EnvironmentView, fresh: EnvironmentView): void {
  expect(view.snapshotJson()).toBe(serializedWhole(fresh));
  expect(fresh.snapshotJson()).toBe(serializedWhole(fresh));
  expect(view.etag).toBe(fresh.etag);
  for (const key of [...fresh.compiled.keys, 'no-such-flag'])
    for (const ctx of CONTEXTS)
      expect(view.compiled.evaluate(key, ctx, view.killed), `${view.environment} ${key}`).toEqual(
        fresh.compiled.evaluate(key, ctx, fresh.killed),
      );
}

describe('views made from the ones before, after any sequence of changes', () => {
  let scenario: Scenario | undefined;
  afterEach(async () => {
    await scenario?.stop();
    scenario = undefined;
  });

  it('serve the snapshot and the evaluations of a server starting on the same commit, and keep untouched entries', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 10 }), async (steps) => {
        await scenario?.stop();
        scenario = await Scenario.start();
        for (const s of steps) {
          const before = scenario.views();
          const touched = await scenario.apply(s);
          await scenario.holder.served(ORG);
          const after = scenario.views();
          const fresh = await fromScratch(scenario.repo);
          for (const e of ENVIRONMENTS) {
            expectSameAsFresh(after[e], fresh.view(PROJECT, e)!);
            if (touched === '*') continue;
            for (const key of Object.keys(after[e].flags))
              if (!touched.has(key)) expect(after[e].flags[key], `${s.kind} left ${key} in ${e} as it was`).toBe(before[e].flags[key]);
          }
        }
      }),
      { seed: 20_250_611, numRuns: 6 },
    );
  }, 120_000);

  it('serve a change to one flag with the compiled flags and entries of every other flag as they were', async () => {
    scenario = await Scenario.start();
    const { prod: before, dev } = scenario.views();
    await scenario.apply({ kind: 'edit', key: 1, env: 'prod', pct: 60 });
    await scenario.holder.served(ORG);
    const after = scenario.views().prod;
    expect(after.flags.b).not.toBe(before.flags.b);
    expect(after.compiled.flag('b')).not.toBe(before.compiled.flag('b'));
    expect(after.flags.a).toBe(before.flags.a);
    expect(after.compiled.flag('a')).toBe(before.compiled.flag('a'));
    expect(after.compiled.flag('d')).toBe(before.compiled.flag('d'));
    // The other environments did not change: the same views.
    expect(scenario.views().dev).toBe(dev);
    expectSameAsFresh(after, (await fromScratch(scenario.repo)).view(PROJECT, 'prod')!);
  });
});
