import type { EnvironmentConfig, EnvironmentName, FlagState, ProjectState, SegmentFile } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { checkReferences, configReferenceIssues } from '../../src/foundations/repository/project-checks.js';

const ENVS: readonly EnvironmentName[] = ['dev', 'staging', 'prod'];

/** A small deterministic generator (mulberry32), so a failing case can be run again. */
function random(seed: number): (n: number) => number {
  let a = seed;
  return (n) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** A config naming up to two segments and up to three prerequisites, some missing, some the flag itself. */
function randomConfig(pick: (n: number) => number, keys: readonly string[]): EnvironmentConfig {
  const segment = () => ['gold', 'silver', 'missing'][pick(3)];
  const flag = () => (pick(6) === 0 ? 'ghost' : keys[pick(keys.length)]);
  const config: EnvironmentConfig = {
    enabled: true,
    rolloutPct: 100,
    valueOn: true,
    valueOff: false,
    version: 1,
    rules: Array.from({ length: pick(3) }, (_, r) => ({
      id: `r${r}`,
      serve: 'on',
      conditions: [{ op: pick(2) === 0 ? 'in_segment' : 'not_in_segment', value: segment() }],
    })) as EnvironmentConfig['rules'],
  };
  const prerequisites = Array.from({ length: pick(4) }, () => ({ flag: flag(), variation: ['on', 'off', 'blue'][pick(3)] }));
  if (prerequisites.length > 0) config.prerequisites = prerequisites;
  return config;
}

/** What checking the whole project says of one config's file, were the config `config`: the check the control plane made before. */
function wholeProjectIssues(project: ProjectState, key: string, env: EnvironmentName, config: EnvironmentConfig) {
  const current = project.flags.get(key)!;
  const flags = new Map(project.flags);
  flags.set(key, { meta: current.meta, environments: { ...current.environments, [env]: config } });
  const issues: Array<{ file?: string; path?: string; message: string }> = [];
  checkReferences('shop', flags, (k) => flags.has(k), project.segments ?? new Map(), issues);
  const file = layout.configFile('shop', env, key);
  return issues.filter((issue) => issue.file === file).map(({ file: _, ...issue }) => issue);
}

describe('the reference checks of one config (a control-plane write)', () => {
  it('say of the config what checking the whole project says of its file: segments, prerequisites, cycles', () => {
    let withIssues = 0;
    let withCycles = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const pick = random(seed);
      const keys = Array.from({ length: 2 + pick(7) }, (_, i) => `f${i}`);
      const flags = new Map<string, FlagState>();
      for (const key of keys) {
        const environments = Object.fromEntries(ENVS.map((env) => [env, randomConfig(pick, keys)])) as FlagState['environments'];
        flags.set(key, { meta: { id: `flg_${key}`, key, kind: 'boolean', archivedAt: null }, environments });
      }
      const segments = new Map<string, SegmentFile>([
        ['gold', { key: 'gold' } as SegmentFile],
        ['silver', { key: 'silver' } as SegmentFile],
      ]);
      const project = { project: { id: 'prj_shop', name: 'Shop', slug: 'shop' }, flags, segments } as unknown as ProjectState;
      const key = keys[pick(keys.length)];
      const env = ENVS[pick(3)];
      const config = randomConfig(pick, keys);
      const expected = wholeProjectIssues(project, key, env, config);
      expect(configReferenceIssues(project, key, env, config), `seed ${seed}`).toEqual(expected);
      if (expected.length > 0) withIssues++;
      if (expected.some((issue) => issue.message.includes('cycle'))) withCycles++;
    }
    // The cases cover what they are meant to: configs with issues, cycles among them, and clean ones.
    expect(withIssues).toBeGreaterThan(50);
    expect(withCycles).toBeGreaterThan(20);
    expect(withIssues).toBeLessThan(400);
  });

  it('of a flag not in the project: none', () => {
    const project = { project: { slug: 'shop' }, flags: new Map(), segments: new Map() } as unknown as ProjectState;
    expect(configReferenceIssues(project, 'nope', 'prod', randomConfig(random(1), ['a']))).toEqual([]);
  });
});
