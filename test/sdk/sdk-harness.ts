import diagnostics from 'node:diagnostics_channel';
import { rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EnvironmentName } from '@flagops/core';
import type { ClientEvents, FetchFunction, Scheduler } from '@flagops/sdk';
import { KillSwitch } from '../../src/features/kill/kill-switch.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../src/foundations/repository/serialize-file.js';
import { startService } from '../../src/service.js';
import {
  ADMIN_KEY,
  actor,
  commitFiles,
  type EvalHarness,
  type FlagSpec,
  ORG,
  projectFiles,
  sdkKey,
  startHarness,
} from '../eval-server/harness.js';

export { ADMIN_KEY, ORG };

/** A targeting flag: country in [DE, FR] and appVersion > 2.0.0 gets it, everyone else a 30% rollout. */
export const checkoutFlag: FlagSpec = {
  key: 'new-checkout',
  rolloutPct: 30,
  rules: [
    {
      id: 'eu-new-app',
      serve: 'on',
      conditions: [
        { attribute: 'country', op: 'in', value: ['DE', 'FR'] },
        { attribute: 'appVersion', op: 'semver_gt', value: '2.0.0' },
      ],
    },
  ],
};

export const shopFlags: FlagSpec[] = [
  checkoutFlag,
  { key: 'banner-text', kind: 'string', valueOn: 'Spring sale', valueOff: 'Welcome' },
  { key: 'max-items', kind: 'number', valueOn: 50, valueOff: 10 },
  { key: 'theme', kind: 'json', valueOn: { color: 'teal', dense: true }, valueOff: { color: 'grey', dense: false } },
  { key: 'old-search', archivedAt: '2026-01-01T00:00:00.000Z', defaultValue: false },
  { key: 'old-banner', kind: 'string', valueOn: 'Old', valueOff: 'Older', archivedAt: '2026-01-01T00:00:00.000Z' },
  { key: 'dark-mode', enabled: false },
];

export interface SdkHarness extends EvalHarness {
  key: string;
  kills: KillSwitch;
}

/**
 * startHarness, with a stop that survives a write into the data directory landing during its removal (the
 * audit index can still be saving its cache to state/audit when the service's stop() has returned).
 */
export async function startServiceHarness(): Promise<EvalHarness> {
  const h = await startHarness();
  h.stop = async () => {
    await h.service.stop();
    await rm(h.dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  };
  return h;
}

/** The whole service with project `shop` (the flags above) and an SDK key for prod. */
export async function startSdkHarness(flags: FlagSpec[] = shopFlags): Promise<SdkHarness> {
  const h = await startServiceHarness();
  await commitFiles(h.repo, projectFiles('shop', flags), 'the shop project');
  await h.service.holder.served(ORG);
  const key = await sdkKey(h, 'shop', 'prod');
  return Object.assign(h, { key, kills: new KillSwitch(h.service.holder) });
}

/** Commits one flag's config in one environment, as a config update through the API would. */
export async function setConfig(h: EvalHarness, flagKey: string, config: Partial<FlagSpec>, env: EnvironmentName = 'prod', slug = 'shop') {
  const value = {
    enabled: config.enabled ?? true,
    rolloutPct: config.rolloutPct ?? 100,
    valueOn: config.valueOn ?? true,
    valueOff: config.valueOff ?? false,
    version: config.version ?? 2,
    rules: config.rules ?? [],
  };
  await commitFiles(
    h.repo,
    [{ path: layout.configFile(slug, env, flagKey), content: serializeRepositoryFile({ kind: 'config', value }) }],
    `change ${flagKey}`,
  );
  await h.service.holder.served(ORG);
}

export function killRequest(h: SdkHarness, flagKey: string, env: EnvironmentName = 'prod') {
  return { org: ORG, repo: h.repo, projectSlug: 'shop', flagKey, environment: env, actor };
}

export interface SeenRequest {
  method: string;
  path: string;
  /** `pending` until the response arrives. */
  status: number | 'pending' | 'failed';
  ifNoneMatch: string | null;
  body?: string;
}

/** A fetch that records every request the SDK makes and what came back; `fail` makes matching requests fail. */
export function recordingFetch(fail?: (path: string) => boolean): { fetch: FetchFunction; requests: SeenRequest[] } {
  const requests: SeenRequest[] = [];
  const recording: FetchFunction = async (input, init) => {
    const path = new URL(input).pathname;
    const headers = new Headers(init?.headers);
    const seen: SeenRequest = { method: init?.method ?? 'GET', path, status: 'pending', ifNoneMatch: headers.get('if-none-match') };
    if (typeof init?.body === 'string') seen.body = init.body;
    requests.push(seen);
    try {
      if (fail?.(path)) throw new TypeError('fetch failed (simulated)');
      const res = await fetch(input, init);
      seen.status = res.status;
      return res;
    } catch (err) {
      seen.status = 'failed';
      throw err;
    }
  };
  return { fetch: recording, requests };
}

type Listenable = { on<E extends keyof ClientEvents>(event: E, listener: (payload: ClientEvents[E]) => void): () => void };

/** Resolves with the first `event` that satisfies `check`, or rejects after `ms`. */
export function nextEvent<E extends keyof ClientEvents>(
  client: Listenable,
  event: E,
  check: (payload: ClientEvents[E]) => boolean = () => true,
  ms = 5_000,
) {
  return new Promise<ClientEvents[E]>((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching ${event} event within ${ms} ms`));
    }, ms);
    const off = client.on(event, (payload) => {
      if (!check(payload)) return;
      clearTimeout(timer);
      off();
      resolve(payload);
    });
  });
}

/** Resolves once the client's status is `status` (at once if it already is), or rejects after `ms`. */
export async function untilStatus(
  client: Listenable & { status: string },
  status: ClientEvents['status']['status'],
  ms = 5_000,
): Promise<void> {
  if (client.status === status) return;
  await nextEvent(client, 'status', (e) => e.status === status, ms);
}

/** Stops the service but keeps its data directory, so that `restart` brings the same keys and flags back. */
export async function stopKeepingData(h: SdkHarness): Promise<{ evalPort: number; controlPort: number }> {
  const evalPort = Number(new URL(h.service.evalUrl).port);
  const controlPort = Number(new URL(h.service.controlUrl).port);
  await h.service.stop();
  return { evalPort, controlPort };
}

/** Starts the service again on the same ports and data directory. */
export async function restart(h: SdkHarness, ports: { evalPort: number; controlPort: number }): Promise<void> {
  const service = await startService(
    {
      dataDir: h.dataDir,
      host: '127.0.0.1',
      controlPort: ports.controlPort,
      evalPort: ports.evalPort,
      bootstrapKeys: [{ org: ORG, key: ADMIN_KEY }],
      planProjectLimit: 1000,
      logLevel: 'error',
    },
    silentLogger,
  );
  h.service = service;
  h.repo = await service.repos.get(ORG);
  h.kills = new KillSwitch(service.holder);
}

export const quiet = { warn: () => {}, error: () => {} };

/** Real timers, watched: which are pending, and whether any fires once `closed` is set. */
export function watchedScheduler() {
  const pending = new Set<ReturnType<typeof setTimeout>>();
  const state = { closed: false, firedAfterClose: 0, pending };
  const scheduler: Scheduler = {
    now: () => Date.now(),
    setTimeout: (fn, ms) => {
      const handle = setTimeout(() => {
        pending.delete(handle);
        if (state.closed) state.firedAfterClose++;
        fn();
      }, ms);
      pending.add(handle);
      return handle;
    },
    clearTimeout: (handle) => {
      pending.delete(handle as ReturnType<typeof setTimeout>);
      clearTimeout(handle as ReturnType<typeof setTimeout>);
    },
  };
  return { scheduler, state };
}

/**
 * The streams (GET /v1/stream) opened with `key`, as this process's HTTP servers see them (node:http's
 * diagnostics channel): how many are open now. A stream counts as closed once the server's response closes,
 * whoever ended it. `stop()` stops watching.
 */
export function watchServerStreams(key: string): { readonly open: number; stop(): void } {
  let open = 0;
  const onStart = (message: unknown) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    const sent = request.headers.authorization === `Bearer ${key}` || request.url?.includes(`sdkKey=${encodeURIComponent(key)}`);
    if (!request.url?.startsWith('/v1/stream') || !sent) return;
    open++;
    response.once('close', () => open--);
  };
  diagnostics.subscribe('http.server.request.start', onStart);
  return {
    get open() {
      return open;
    },
    stop: () => diagnostics.unsubscribe('http.server.request.start', onStart),
  };
}
