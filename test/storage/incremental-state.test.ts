import { join } from 'node:path';
import type { FlagFile } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { parseRepositoryFile } from '../../src/foundations/repository/parse-file.js';
import { type Clash, claimsClash, firstByKey } from '../../src/foundations/repository/project-checks.js';
import { readRepositoryFiles } from '../../src/foundations/repository/read-repository.js';
import { serializeCommit } from '../../src/foundations/storage/git/git-objects.js';
import { ObjectStore } from '../../src/foundations/storage/git/object-store.js';
import { compareAndSwapRef, MAIN_REF, readRef } from '../../src/foundations/storage/git/refs.js';
import { writeTreeChanges } from '../../src/foundations/storage/git/tree-writer.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { formatIssue } from '../../src/foundations/validation/issue.js';
import { agent, configYaml, meta, tempDir, track } from './helpers.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const PROJECTS = ['shop', 'web', 'a-b', 'a'];
const KEYS = ['a', 'A', 'b', 'c', 'a-b'];
const ENVS = ['dev', 'staging', 'prod'];

/** A random file of the layout, valid or not, with ids shared across projects now and then. */
function randomFile(random: () => number): [string, string | null] {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const project = pick(PROJECTS);
  const key = pick(KEYS);
  const roll = random();
  if (random() < 0.1) return [`projects/${project}/flags/${key}.yaml`, null];
  if (roll < 0.08)
    return [
      `projects/${project}/project.yaml`,
      `id: ${random() < 0.9 ? `prj_${project}` : 'prj_same'}\nname: P\nslug: ${random() < 0.9 ? project : 'other'}\n`,
    ];
  if (roll < 0.16) {
    const killed = KEYS.filter(() => random() < 0.2);
    const body = killed.map((k) => `  ${k}:\n    killedAt: 2025-03-02T14:05:00Z\n    killedBy: alice\n`).join('');
    return [
      `projects/${project}/environments/${pick(ENVS)}/kills.yaml`,
      random() < 0.9 ? `kills:${body ? `\n${body}` : ' {}\n'}` : 'kills: [\n',
    ];
  }
  if (roll < 0.45) {
    const id = random() < 0.7 ? `flg_${project}_${key.toLowerCase()}` : pick(['flg_x', 'flg_y']);
    return [`projects/${project}/flags/${key}.yaml`, random() < 0.92 ? `id: ${id}\nkey: ${key}\nkind: boolean\n` : 'key: [\n'];
  }
  const text =
    random() < 0.85
      ? configYaml({ enabled: random() < 0.5, version: Math.floor(random() * 100) })
      : random() < 0.5
        ? 'enabled: maybe\n'
        : 'enabled: true\nrolloutPct: 0\nvalueOn: "on"\nvalueOff: false\n';
  return [`projects/${project}/environments/${pick(ENVS)}/${key}.yaml`, text];
}

/**
 * What every file of a commit assembles to, the flags of a clash that claimed it longest along `history`
 * (the files of each earlier commit, oldest first) keeping it: the serving rule, worked out the plain way.
 */
function assembleWithHistory(files: ReadonlyMap<string, string>, commit: string, history: ReadonlyArray<ReadonlyMap<string, string>>) {
  const list = (of: ReadonlyMap<string, string>) => [...of].map(([path, text]) => ({ path, text }));
  const first = readRepositoryFiles(list(files), commit);
  const claims = (of: ReadonlyMap<string, string>, clash: Clash, path: string) => {
    const text = of.get(path);
    return claimsClash(
      clash,
      text === undefined ? undefined : { value: parseRepositoryFile(path, text).file?.value as FlagFile | undefined },
    );
  };
  const incumbents = new Set<string>();
  for (const clash of first.clashes) {
    let running = clash.paths;
    let keeper: string | undefined;
    for (let i = history.length - 1; i >= 0 && keeper === undefined; i--) {
      const still = running.filter((path) => claims(history[i], clash, path));
      if (still.length === 1) keeper = still[0];
      if (still.length <= 1) break;
      running = still;
    }
    keeper ??= running === clash.paths ? undefined : firstByKey(running);
    if (keeper !== undefined) incumbents.add(keeper);
  }
  return incumbents.size === 0 ? first : readRepositoryFiles(list(files), commit, { incumbents });
}

describe('the state of each new head, brought up to date from the previous one', () => {
  it('equals the state a fresh instance reads, and what assembling every file gives, through random pushes', async () => {
    const gitdir = join(tempDir(), 'org.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true, durable: false, parseCache: false }));
    const objects = new ObjectStore(gitdir, { durable: false });
    const random = rng(42);
    const files = new Map<string, string>();
    const commits: string[] = [];
    // Every project starts whole and valid, so that random changes break and mend flags that are served.
    const seed = new Map<string, string>();
    for (const project of PROJECTS) {
      seed.set(`projects/${project}/project.yaml`, `id: prj_${project}\nname: P\nslug: ${project}\n`);
      for (const key of KEYS.filter((k) => k !== 'A')) {
        seed.set(`projects/${project}/flags/${key}.yaml`, `id: flg_${project}_${key}\nkey: ${key}\nkind: boolean\n`);
        for (const env of ENVS) seed.set(`projects/${project}/environments/${env}/${key}.yaml`, configYaml());
      }
    }
    await repo.update(() => ({
      changes: [...seed].map(([path, content]) => ({ path, content })),
      meta: meta('import'),
      result: undefined,
    }));
    for (const [path, content] of seed) files.set(path, content);
    /** The files of each commit on main before the head, oldest first. */
    const history: Array<Map<string, string>> = [];
    let last = await readRef(gitdir, MAIN_REF);
    try {
      for (let step = 0; step < 60; step++) {
        const head = await readRef(gitdir, MAIN_REF);
        const before = new Map(files);
        // Mostly pushes (anything goes), sometimes an update through the validating write path.
        if (step % 7 === 6) {
          const [path] = randomFile(random);
          const content = configYaml({ version: step });
          const config = path.replace(/\/flags\/([^/]+)$/, '/environments/dev/$1');
          if (!config.includes('/environments/')) continue;
          const ok = await repo
            .update(() => ({ changes: [{ path: config, content }], meta: meta('config_update'), result: true }))
            .catch(() => false);
          if (ok) files.set(config, content);
        } else {
          const changes = new Map<string, string | null>();
          for (let i = 1 + Math.floor(random() * 3); i > 0; i--) {
            const [path, content] = randomFile(random);
            if (content === null && !files.has(path)) continue;
            changes.set(path, content);
          }
          const batch = objects.batch();
          const blobs = new Map(
            [...changes].map(([path, content]) => [path, content === null ? null : batch.write('blob', Buffer.from(content))]),
          );
          const tree = await writeTreeChanges(objects, batch, head ? (await objects.readCommit(head)).tree : null, blobs);
          const who = { name: agent.name, email: 'bot@example.com', timestamp: 1_700_000_000 + step, timezoneOffset: 0 };
          const commit = batch.write(
            'commit',
            serializeCommit({ tree, parents: head ? [head] : [], author: who, committer: who, message: `step ${step}\n` }),
          );
          await batch.done();
          expect((await compareAndSwapRef(gitdir, MAIN_REF, head, commit, { durable: false })).ok).toBe(true);
          for (const [path, content] of changes) {
            if (content === null) files.delete(path);
            else files.set(path, content);
          }
        }
        const at = (await readRef(gitdir, MAIN_REF))!;
        if (at !== last) history.push(new Map(before));
        last = at;
        commits.push(at);
        const held = await repo.readState();
        const fresh = await track(await FlagRepository.open({ gitdir, parseCache: false })).readState();
        expect(held, `step ${step}`).toEqual(fresh);
        const whole = assembleWithHistory(files, at, history);
        expect(held.state, `step ${step}`).toEqual(whole.state);
        expect(held.issues.map(formatIssue).sort(), `step ${step}`).toEqual(whole.issues.map(formatIssue).sort());
        // Now and then an older commit, so the next head is brought up to date from further back.
        if (step % 5 === 4) {
          const older = commits[Math.floor(random() * commits.length)];
          expect(await repo.readState(older)).toEqual(
            await track(await FlagRepository.open({ gitdir, parseCache: false })).readState(older),
          );
        }
      }
    } finally {
      objects.close();
    }
  });
});

describe('a big directory brought up to date by the bytes of its tree that changed', () => {
  it('equals what a fresh instance reads, issues included, as files in it are changed, broken, mended, removed and added', async () => {
    const gitdir = join(tempDir(), 'org.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true, durable: false, parseCache: false }));
    const objects = new ObjectStore(gitdir, { durable: false });
    const random = rng(7);
    // More files in one directory than the reader walks entry by entry (256).
    const keys = Array.from({ length: 300 }, (_, i) => `f${i}`);
    const files = new Map<string, string>([['projects/big/project.yaml', 'id: prj_big\nname: Big\nslug: big\n']]);
    for (const key of keys) {
      files.set(`projects/big/flags/${key}.yaml`, `id: flg_${key}\nkey: ${key}\nkind: boolean\n`);
      for (const env of ENVS) files.set(`projects/big/environments/${env}/${key}.yaml`, configYaml());
    }
    files.set('projects/big/environments/prod/kills.yaml', 'kills: {}\n');
    await repo.update(() => ({
      changes: [...files].map(([path, content]) => ({ path, content })),
      meta: meta('import'),
      result: undefined,
    }));
    const removed: string[] = [];
    try {
      for (let step = 0; step < 50; step++) {
        const head = await readRef(gitdir, MAIN_REF);
        const changes = new Map<string, string | null>();
        for (let i = random() < 0.2 ? 2 : 1; i > 0; i--) {
          const key = keys[Math.floor(random() * keys.length)];
          const path = `projects/big/environments/prod/${key}.yaml`;
          const roll = random();
          if (roll < 0.35) changes.set(path, configYaml({ enabled: random() < 0.5, version: step + 2 }));
          else if (roll < 0.5) changes.set(path, 'enabled: maybe\n');
          else if (roll < 0.62 && files.has(path)) changes.set(path, null);
          else if (roll < 0.75 && removed.length > 0) changes.set(removed.pop()!, configYaml({ version: step + 2 }));
          else if (roll < 0.9) {
            const killed = keys.filter(() => random() < 0.02);
            const body = killed.map((k) => `  ${k}:\n    killedAt: 2025-03-02T14:05:00Z\n    killedBy: alice\n`).join('');
            changes.set('projects/big/environments/prod/kills.yaml', `kills:${body ? `\n${body}` : ' {}\n'}`);
          } else changes.set('projects/big/environments/prod/kills.yaml', 'kills: [\n');
        }
        const batch = objects.batch();
        const blobs = new Map(
          [...changes].map(([path, content]) => [path, content === null ? null : batch.write('blob', Buffer.from(content))]),
        );
        const tree = await writeTreeChanges(objects, batch, head ? (await objects.readCommit(head)).tree : null, blobs);
        const who = { name: agent.name, email: 'bot@example.com', timestamp: 1_700_000_000 + step, timezoneOffset: 0 };
        const commit = batch.write(
          'commit',
          serializeCommit({ tree, parents: [head!], author: who, committer: who, message: `step ${step}\n` }),
        );
        await batch.done();
        expect((await compareAndSwapRef(gitdir, MAIN_REF, head, commit, { durable: false })).ok).toBe(true);
        for (const [path, content] of changes) {
          if (content === null) {
            files.delete(path);
            removed.push(path);
          } else files.set(path, content);
        }
        const held = await repo.readState();
        expect(held, `step ${step}`).toEqual(await track(await FlagRepository.open({ gitdir, parseCache: false })).readState());
        const whole = readRepositoryFiles(
          [...files].map(([path, text]) => ({ path, text })),
          commit,
        );
        expect(held.state, `step ${step}`).toEqual(whole.state);
        expect(held.issues.map(formatIssue).sort(), `step ${step}`).toEqual(whole.issues.map(formatIssue).sort());
      }
    } finally {
      objects.close();
    }
  }, 60_000);
});
