import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Actor, EnvironmentName, FlagKind, JsonValue, KillsFile, Prerequisite, Rule, Variant } from '@flagops/core';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../src/foundations/repository/serialize-file.js';
import type { FlagRepository } from '../../src/foundations/storage/flag-repository.js';
import { type Service, startService } from '../../src/service.js';

export const ORG = 'acme';
export const ADMIN_KEY = 'svc_adm_evalserveradmin00000000000001';
export const actor: Actor = { type: 'admin', name: 'test', keyPrefix: ADMIN_KEY.slice(0, 16) };

export interface EvalHarness {
  service: Service;
  repo: FlagRepository;
  dataDir: string;
  stop(): Promise<void>;
}

/** The whole service on free loopback ports with a temp data dir. */
export async function startHarness(): Promise<EvalHarness> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-eval-'));
  const service = await startService(
    {
      dataDir,
      host: '127.0.0.1',
      controlPort: 0,
      evalPort: 0,
      bootstrapKeys: [{ org: ORG, key: ADMIN_KEY }],
      planProjectLimit: 1000,
      logLevel: 'error',
    },
    silentLogger,
  );
  const repo = await service.repos.get(ORG);
  return {
    service,
    repo,
    dataDir,
    stop: async () => {
      await service.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface FlagSpec {
  key: string;
  kind?: FlagKind;
  defaultValue?: JsonValue;
  archivedAt?: string | null;
  enabled?: boolean;
  rolloutPct?: number;
  valueOn?: JsonValue;
  valueOff?: JsonValue;
  rules?: Rule[];
  version?: number;
  variants?: Variant[];
  prerequisites?: Prerequisite[];
}

/** The files of one project with the given flags, the same config in all three environments. */
export function projectFiles(slug: string, flags: FlagSpec[], kills: Partial<Record<EnvironmentName, KillsFile>> = {}) {
  const files: Array<{ path: string; content: string }> = [
    {
      path: layout.projectFile(slug),
      content: serializeRepositoryFile({ kind: 'project', value: { id: `prj_${slug}`, name: slug, slug } }),
    },
  ];
  for (const f of flags) {
    files.push({
      path: layout.flagFile(slug, f.key),
      content: serializeRepositoryFile({
        kind: 'flag',
        value: {
          id: `flg_${slug}_${f.key}`,
          key: f.key,
          kind: f.kind ?? 'boolean',
          defaultValue: f.defaultValue,
          archivedAt: f.archivedAt ?? null,
        },
      }),
    });
    for (const env of ['dev', 'staging', 'prod'] as const) {
      files.push({
        path: layout.configFile(slug, env, f.key),
        content: serializeRepositoryFile({
          kind: 'config',
          value: {
            enabled: f.enabled ?? true,
            rolloutPct: f.rolloutPct ?? 100,
            valueOn: f.valueOn ?? true,
            valueOff: f.valueOff ?? false,
            version: f.version ?? 1,
            rules: f.rules ?? [],
            ...(f.variants ? { variants: f.variants } : {}),
            ...(f.prerequisites ? { prerequisites: f.prerequisites } : {}),
          },
        }),
      });
    }
  }
  for (const env of ['dev', 'staging', 'prod'] as const) {
    files.push({
      path: layout.killsFile(slug, env),
      content: serializeRepositoryFile({ kind: 'kills', value: kills[env] ?? { kills: {} } }),
    });
  }
  return files;
}

export async function commitFiles(repo: FlagRepository, files: Array<{ path: string; content: string | null }>, summary = 'test change') {
  return repo.update(() => ({ changes: files, meta: { action: 'change', summary, actor }, result: null }));
}

export async function sdkKey(h: EvalHarness, slug: string, environment: EnvironmentName): Promise<string> {
  const created = await h.service.keys.createKey(ORG, { kind: 'sdk', projectId: `prj_${slug}`, environment });
  return created.key;
}

export async function evaluate(h: EvalHarness, key: string, body: unknown): Promise<Response> {
  return fetch(`${h.service.evalUrl}/v1/evaluate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Polls until `check` holds or `ms` pass; returns how long it took, or throws with the last value. */
export async function within<T>(ms: number, read: () => Promise<T>, check: (value: T) => boolean): Promise<number> {
  const started = performance.now();
  let last: T | undefined;
  while (performance.now() - started < ms) {
    last = await read();
    if (check(last)) return performance.now() - started;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`not within ${ms} ms; last: ${JSON.stringify(last)}`);
}
