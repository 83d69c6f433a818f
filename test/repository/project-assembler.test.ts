import type { EnvironmentConfig, FlagFile, KillsFile } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { assembleState, type RepositoryEntry } from '../../src/foundations/repository/assemble-state.js';
import type { ParsedFile } from '../../src/foundations/repository/parsed-file.js';
import { type EntryChange, ProjectAssembler } from '../../src/foundations/repository/project-assembler.js';

const SLUG = 'shop';
const ENVS = ['dev', 'staging', 'prod'] as const;

/** A deterministic pseudo-random stream, so a failure replays. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The files of a project folder in the order StateLoader walks a tree: a folder's files, then its folders, each in git order. */
function inTreeOrder(files: ReadonlyMap<string, ParsedFile | undefined>): RepositoryEntry[] {
  interface Dir {
    files: Map<string, string>;
    dirs: Map<string, Dir>;
  }
  const root: Dir = { files: new Map(), dirs: new Map() };
  for (const path of files.keys()) {
    const parts = path.split('/');
    let dir = root;
    for (const part of parts.slice(0, -1)) {
      if (!dir.dirs.has(part)) dir.dirs.set(part, { files: new Map(), dirs: new Map() });
      dir = dir.dirs.get(part)!;
    }
    dir.files.set(parts[parts.length - 1], path);
  }
  const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
  const out: RepositoryEntry[] = [];
  const walk = (dir: Dir) => {
    for (const name of [...dir.files.keys()].sort(bytes)) {
      const path = dir.files.get(name)!;
      const file = files.get(path);
      out.push(file ? { path, file } : { path });
    }
    for (const name of [...dir.dirs.keys()].sort((a, b) => bytes(`${a}/`, `${b}/`))) walk(dir.dirs.get(name)!);
  };
  walk(root);
  return out;
}

function wholeAssembly(files: ReadonlyMap<string, ParsedFile | undefined>) {
  const { state, issues } = assembleState(inTreeOrder(files), null);
  return { state: state.projects.get(SLUG), issues };
}

/** Random files of one project, with every kind of cross-file issue likely: few keys, few ids, letter case. */
function randomFile(random: () => number, keys: readonly string[]): [string, ParsedFile | undefined] {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const invalid = random() < 0.08;
  const roll = random();
  if (roll < 0.04) {
    const slug = random() < 0.85 ? SLUG : 'other';
    return [`projects/${SLUG}/project.yaml`, invalid ? undefined : { kind: 'project', value: { id: 'prj_1', name: 'Shop', slug } }];
  }
  if (roll < 0.12) {
    const kills: KillsFile = { kills: {} };
    for (const key of [...new Set(keys.filter(() => random() < 0.15))].sort())
      kills.kills[key] = { killedAt: '2025-03-02T14:05:00Z', killedBy: 'alice' };
    return [`projects/${SLUG}/environments/${pick(ENVS)}/kills.yaml`, invalid ? undefined : { kind: 'kills', value: kills }];
  }
  if (roll < 0.16) return [`projects/${SLUG}/README.md`, undefined];
  const key = pick(keys);
  if (roll < 0.5) {
    const value: FlagFile = {
      id: random() < 0.8 ? `flg_${key.toLowerCase()}` : pick(['flg_x', 'flg_y']),
      key: random() < 0.9 ? key : 'wrong',
      kind: pick(['boolean', 'string']),
      archivedAt: null,
    };
    return [`projects/${SLUG}/flags/${key}.yaml`, invalid ? undefined : { kind: 'flag', value }];
  }
  const boolean = random() < 0.7;
  const value: EnvironmentConfig = {
    enabled: random() < 0.5,
    rolloutPct: 100,
    valueOn: boolean ? true : 'on',
    valueOff: boolean ? false : 'off',
    version: Math.floor(random() * 1000),
    rules: [],
  };
  // Prerequisites: on flags with and without files, served or held back, and cycles among them.
  if (random() < 0.3) value.prerequisites = [{ flag: pick(keys), variation: 'on' }];
  return [`projects/${SLUG}/environments/${pick(ENVS)}/${key}.yaml`, invalid ? undefined : { kind: 'config', value }];
}

describe('a project assembled file by file', () => {
  // Few keys: collisions of every kind, and changes that touch most of the project. More keys: changes that
  // touch a few flags of many, where only the flags related to the changed ones are re-checked.
  it.each([
    { keys: ['a', 'A', 'b', 'a-b', 'a.b', 'B', 'c', 'ab', 'z9', 'Z9', 'ä'], files: 30 },
    { keys: ['a', 'A', 'b', 'a-b', 'a.b', 'B', 'ä', ...Array.from({ length: 40 }, (_, i) => `k${i}`)], files: 150 },
  ])('equals the whole assembly after every random change, issues and their order included ($files files)', ({ keys, files: size }) => {
    for (let seed = 1; seed <= 30; seed++) {
      const random = rng(seed);
      const files = new Map<string, ParsedFile | undefined>();
      for (let i = 0; i < size; i++) {
        const [path, file] = randomFile(random, keys);
        files.set(path, file);
      }
      const built = ProjectAssembler.build(SLUG, inTreeOrder(files))!;
      expect(built.result).toEqual(wholeAssembly(files));
      const assembler = built.assembler;
      for (let step = 0; step < 60; step++) {
        const changes: EntryChange[] = [];
        const count = 1 + Math.floor(random() * 3);
        for (let i = 0; i < count; i++) {
          const existing = [...files.keys()];
          const [path, file] =
            random() < 0.25 && existing.length > 0 ? [existing[Math.floor(random() * existing.length)], null] : randomFile(random, keys);
          if (changes.some((c) => c.path === path)) continue;
          if (file === null) files.delete(path);
          else files.set(path, file);
          changes.push({ path, entry: file === null ? null : file ? { path, file } : { path } });
        }
        const result = assembler.apply(changes);
        expect(result, `seed ${seed}, step ${step}`).toEqual(wholeAssembly(files));
      }
    }
  });

  it('reuses the FlagState of every flag a change did not touch, and never changes a result it handed out', () => {
    const files = new Map<string, ParsedFile | undefined>();
    files.set(`projects/${SLUG}/project.yaml`, { kind: 'project', value: { id: 'prj_1', name: 'Shop', slug: SLUG } });
    const config = (version: number): ParsedFile => ({
      kind: 'config',
      value: { enabled: true, rolloutPct: 100, valueOn: true, valueOff: false, version, rules: [] },
    });
    for (const key of ['a', 'b', 'c']) {
      files.set(`projects/${SLUG}/flags/${key}.yaml`, {
        kind: 'flag',
        value: { id: `flg_${key}`, key, kind: 'boolean', archivedAt: null },
      });
      for (const env of ENVS) files.set(`projects/${SLUG}/environments/${env}/${key}.yaml`, config(1));
    }
    const { assembler, result: before } = ProjectAssembler.build(SLUG, inTreeOrder(files))!;
    const flagsBefore = [...before.state!.flags];
    const path = `projects/${SLUG}/environments/prod/b.yaml`;
    const after = assembler.apply([{ path, entry: { path, file: config(2) } }])!;
    expect(after.state!.flags.get('a')).toBe(before.state!.flags.get('a'));
    expect(after.state!.flags.get('b')).not.toBe(before.state!.flags.get('b'));
    expect(after.state!.flags.get('b')!.environments.prod.version).toBe(2);
    expect([...before.state!.flags]).toEqual(flagsBefore);
    expect(Object.isFrozen(after.state!.flags.get('b'))).toBe(true);
  });

  it('gives up on a file whose parsed kind does not match its path, leaving it to the whole assembly', () => {
    const path = `projects/${SLUG}/flags/x.yaml`;
    expect(ProjectAssembler.build(SLUG, [{ path, file: { kind: 'project', value: { id: 'p', name: 'P', slug: SLUG } } }])).toBeUndefined();
  });
});
