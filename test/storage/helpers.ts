import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Actor, EnvironmentName } from '@flagops/core';
import { afterEach } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import type { CommitMeta, FileChange, FlagRepository } from '../../src/foundations/storage/index.js';
import { FlagRepository as Repository } from '../../src/foundations/storage/index.js';
import { git, gitWith } from '../helpers/git-cli.js';

const made: string[] = [];
const opened: FlagRepository[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((repo) => repo.close()));
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flagops-storage-'));
  made.push(dir);
  return dir;
}

/** Closes the repository after the test, so no watcher outlives it. */
export function track<T extends FlagRepository>(repo: T): T {
  opened.push(repo);
  return repo;
}

export { git, gitWith } from '../helpers/git-cli.js';

/** The key the control plane signs its commits with; trailers are believed only on commits signed with it. */
export const SIGNING_KEY = Buffer.alloc(32, 5);

export const agent: Actor = { type: 'agent', name: 'deploy-bot', keyPrefix: 'svc_agt_3kq9x2ab' };
export const admin: Actor = { type: 'admin', name: 'ops-admin', keyPrefix: 'svc_adm_7hd82kqa' };

export function projectYaml(slug: string): string {
  return `id: prj_${slug}\nname: Project ${slug}\nslug: ${slug}\n`;
}

export function flagYaml(key: string, id = `flg_${key}`): string {
  return `id: ${id}\nkey: ${key}\nkind: boolean\ndefaultValue: false\narchivedAt: null\n`;
}

export function configYaml(options: { enabled?: boolean; rolloutPct?: number; version?: number } = {}): string {
  return `enabled: ${options.enabled ?? false}\nrolloutPct: ${options.rolloutPct ?? 0}\nvalueOn: true\nvalueOff: false\nversion: ${options.version ?? 1}\nrules: []\n`;
}

/** The files of a new flag: its metadata and a config in every environment, all off. */
export function newFlagFiles(project: string, key: string): FileChange[] {
  const envs: EnvironmentName[] = ['dev', 'staging', 'prod'];
  return [
    { path: layout.flagFile(project, key), content: flagYaml(key) },
    ...envs.map((env) => ({ path: layout.configFile(project, env, key), content: configYaml() })),
  ];
}

export function meta(action: CommitMeta['action'], extra: Partial<CommitMeta> = {}): CommitMeta {
  return { action, summary: `${action} by test`, actor: agent, ...extra };
}

/** A repository holding project `shop` with flags `a` and `b`. */
export async function seedShop(repo: FlagRepository): Promise<string> {
  const { commit } = await repo.update(() => ({
    changes: [
      { path: layout.projectFile('shop'), content: projectYaml('shop') },
      ...newFlagFiles('shop', 'a'),
      ...newFlagFiles('shop', 'b'),
    ],
    meta: meta('project_create', { project: 'shop' }),
    result: undefined,
  }));
  return commit!;
}

/** Clones the bare repository, lets `edit` change the checkout, commits and pushes it to main. */
export function pushFromOutside(gitdir: string, edit: (checkout: string) => void, message = 'edit from outside'): string {
  const checkout = join(tempDir(), 'checkout');
  git(tempDir(), 'clone', '--quiet', gitdir, checkout);
  edit(checkout);
  git(checkout, 'add', '-A');
  git(checkout, 'commit', '--quiet', '-m', message);
  git(checkout, 'push', '--quiet', 'origin', 'HEAD:main');
  return git(checkout, 'rev-parse', 'HEAD');
}

export function waitFor<T>(check: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const poll = () => {
      const value = check();
      if (value !== undefined) return resolve(value);
      if (Date.now() - started > timeoutMs) return reject(new Error('timed out waiting'));
      setTimeout(poll, 10);
    };
    poll();
  });
}

/** Repository files by path; null deletes the file. */
export type Files = Record<string, string | null>;

/** A bare repository whose main has one commit per entry, each applying its files (null deletes), via git fast-import. */
export async function commitHistory(commits: Files[]): Promise<{ gitdir: string; oids: string[] }> {
  const gitdir = join(tempDir(), 'org.git');
  git(tempDir(), 'init', '--quiet', '--bare', '--initial-branch=main', gitdir);
  let stream = '';
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  commits.forEach((files, i) => {
    stream += `commit refs/heads/main\ncommitter Erin <erin@example.com> ${1_700_000_000 + i} +0000\n${data(`commit ${i}`)}`;
    for (const [path, text] of Object.entries(files)) stream += text === null ? `D ${path}\n` : `M 100644 inline ${path}\n${data(text)}`;
    stream += '\n';
  });
  gitWith(gitdir, { input: stream }, 'fast-import', '--quiet');
  const oids = git(gitdir, 'rev-list', '--first-parent', '--reverse', 'main').split('\n');
  return { gitdir, oids };
}

/** A fresh instance, as another server or a restart would open it: nothing remembered. */
export const coldRepository = async (gitdir: string) => track(await Repository.open({ gitdir, parseCache: false }));
