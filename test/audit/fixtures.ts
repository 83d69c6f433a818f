import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Actor, AuditAction, EnvironmentName } from '@flagops/core';
import { afterEach } from 'vitest';
import { AuditIndex } from '../../src/features/audit/index.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { type CommitMeta, type FileChange, FlagRepository } from '../../src/foundations/storage/index.js';

/** Real repositories in temp dirs, closed and removed after each test. */

const cleanups: Array<() => void | Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs `cleanup` after the test, before what was set up earlier in it is removed. */
export function afterTest(cleanup: () => void | Promise<void>): void {
  cleanups.push(cleanup);
}

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flagops-audit-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export const agent: Actor = { type: 'agent', name: 'deploy-bot', keyPrefix: 'svc_agt_3kq9x2ab' };
export const admin: Actor = { type: 'admin', name: 'ops-admin', keyPrefix: 'svc_adm_7hd82kqa' };

export const START = Date.UTC(2026, 0, 1, 9, 0, 0);

/** The installation key the control plane signs its commits with (a fixed one: stable commit ids). */
export const SIGNING_KEY = Buffer.alloc(32, 7);

/** A bare organisation repository whose commits are one minute apart from START (stable times in entries). */
export async function openRepository(): Promise<FlagRepository> {
  let minute = 0;
  const repo = await FlagRepository.open({
    gitdir: join(tempDir(), 'acme.git'),
    create: true,
    signingKey: SIGNING_KEY,
    durable: false,
    clock: () => new Date(START + minute++ * 60_000),
  });
  cleanups.push(() => repo.close());
  return repo;
}

export async function openIndex(repo: FlagRepository): Promise<AuditIndex> {
  const index = await AuditIndex.open({ repo });
  cleanups.push(() => index.close());
  return index;
}

export const projectYaml = (slug: string) => `id: prj_${slug}\nname: Project ${slug}\nslug: ${slug}\n`;

export const flagYaml = (key: string, archivedAt: string | null = null) =>
  `id: flg_${key}\nkey: ${key}\nkind: boolean\ndefaultValue: false\narchivedAt: ${archivedAt ?? 'null'}\n`;

export const configYaml = (options: { enabled?: boolean; rolloutPct?: number; version?: number } = {}) =>
  `enabled: ${options.enabled ?? false}\nrolloutPct: ${options.rolloutPct ?? 0}\nvalueOn: true\nvalueOff: false\nversion: ${options.version ?? 1}\nrules: []\n`;

export function killsYaml(kills: Record<string, { by: string; reason?: string }>): string {
  const keys = Object.keys(kills);
  if (keys.length === 0) return 'kills: {}\n';
  const lines = keys.flatMap((key) => {
    const { by, reason } = kills[key];
    return [
      `  ${key}:`,
      `    killedAt: "2026-01-02T10:00:00Z"`,
      `    killedBy: ${by}`,
      ...(reason ? [`    reason: ${JSON.stringify(reason)}`] : []),
    ];
  });
  return `kills:\n${lines.join('\n')}\n`;
}

const ENVS: EnvironmentName[] = ['dev', 'staging', 'prod'];

export function newFlagFiles(project: string, key: string): FileChange[] {
  return [
    { path: layout.flagFile(project, key), content: flagYaml(key) },
    ...ENVS.map((env) => ({ path: layout.configFile(project, env, key), content: configYaml() })),
  ];
}

/** One commit as the control plane makes it: files plus `Flagops-*` trailers. */
export async function apiCommit(
  repo: FlagRepository,
  changes: FileChange[],
  meta: Partial<CommitMeta> & { action: AuditAction },
): Promise<string> {
  const { commit, committed } = await repo.update(() => ({
    changes,
    meta: { summary: `${meta.action} by test`, actor: agent, ...meta },
    result: undefined,
  }));
  if (!committed) throw new Error('the test commit changed nothing');
  return commit!;
}

/** Project `shop` with flags `a` and `b`, as the control plane creates it: one commit per action. */
export async function seedShop(repo: FlagRepository): Promise<void> {
  await apiCommit(repo, [{ path: layout.projectFile('shop'), content: projectYaml('shop') }], {
    action: 'project_create',
    actor: admin,
    project: 'shop',
  });
  await apiCommit(repo, newFlagFiles('shop', 'a'), { action: 'flag_create', project: 'shop', flag: 'a' });
  await apiCommit(repo, newFlagFiles('shop', 'b'), { action: 'flag_create', project: 'shop', flag: 'b' });
}

/** The git CLI with no user or system configuration, so nothing on the machine changes what it does. */
export function git(cwd: string, args: string[], env: Record<string, string> = {}): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', ...env },
  }).trim();
}

export interface Engineer {
  name: string;
  email: string;
}

export const erin: Engineer = { name: 'Erin Engineer', email: 'erin@example.com' };
export const sam: Engineer = { name: 'Sam Reviewer', email: 'sam@example.com' };

/** A clone of the organisation repository in which an engineer edits YAML, commits and pushes. */
export class Checkout {
  private seconds = 0;

  private constructor(readonly dir: string) {}

  static of(repo: FlagRepository): Checkout {
    const dir = join(tempDir(), 'checkout');
    git(tempDir(), ['clone', '--quiet', repo.gitdir, dir]);
    return new Checkout(dir);
  }

  write(path: string, content: string): this {
    mkdirSync(dirname(join(this.dir, path)), { recursive: true });
    writeFileSync(join(this.dir, path), content);
    return this;
  }

  remove(path: string): this {
    unlinkSync(join(this.dir, path));
    return this;
  }

  git(args: string[], who: Engineer = erin): string {
    const date = `${Math.floor(START / 1000) + 86_400 + this.seconds} +0000`;
    return git(this.dir, args, {
      GIT_AUTHOR_NAME: who.name,
      GIT_AUTHOR_EMAIL: who.email,
      GIT_COMMITTER_NAME: who.name,
      GIT_COMMITTER_EMAIL: who.email,
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
    });
  }

  /** Commits everything in the working tree as `who`; returns the commit id. */
  commit(message: string, who: Engineer = erin): string {
    this.git(['add', '-A'], who);
    this.git(['commit', '--quiet', '--allow-empty', '-m', message], who);
    // Each commit one second after the previous, from a day after START.
    this.seconds++;
    return this.git(['rev-parse', 'HEAD'], who);
  }

  /** Pushes HEAD to main and lets the repository notice, as its watcher would. */
  async push(repo: FlagRepository): Promise<void> {
    this.git(['push', '--quiet', 'origin', 'HEAD:main']);
    await repo.refresh();
  }

  pull(): void {
    this.git(['pull', '--quiet', '--ff-only', 'origin', 'main']);
  }
}
