/**
 * What the webhook tests share: receivers on free loopback ports (that answer, fail or hang, and count the
 * connections held to them), and a WebhookService on a fresh data dir over a real repository whose `change()`
 * commits one audit entry.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { AuditRegistry } from '../../src/features/audit/audit-registry.js';
import { type RetryPolicy, WebhookService, type WebhookServiceOptions } from '../../src/features/webhooks/webhook-service.js';
import type { Logger } from '../../src/foundations/log/logger.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { RepositoryRegistry } from '../../src/foundations/storage/repository-registry.js';
import { stateIn } from '../helpers/control-state.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { configYaml, meta, seedShop } from '../storage/helpers.js';

export interface Received {
  body: string;
  path: string;
  headers: http.IncomingHttpHeaders;
}

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/**
 * A receiver on a free loopback port; `answer` decides each response's status (or null: hang until `release`).
 * `stats.connections` is how many connections are open now, `maxConnections` the most ever open at once;
 * `openByPath` and `maxOpenByPath` the same for requests not answered yet, by URL path (a path per webhook),
 * and `maxOpen` for all paths together. A request counts as answered as soon as the receiver answers it, so
 * the counts never lag behind what the sender sees.
 */
export async function receiver(answer: (n: number) => number | null = () => 200) {
  const received: Received[] = [];
  const hanging: Array<{ res: http.ServerResponse; done: () => void }> = [];
  const stats = {
    connections: 0,
    maxConnections: 0,
    open: 0,
    maxOpen: 0,
    openByPath: new Map<string, number>(),
    maxOpenByPath: new Map<string, number>(),
  };
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    const open = (stats.openByPath.get(path) ?? 0) + 1;
    stats.openByPath.set(path, open);
    stats.maxOpenByPath.set(path, Math.max(open, stats.maxOpenByPath.get(path) ?? 0));
    stats.maxOpen = Math.max(++stats.open, stats.maxOpen);
    let counted = true;
    const done = () => {
      if (!counted) return;
      counted = false;
      stats.open--;
      stats.openByPath.set(path, (stats.openByPath.get(path) ?? 1) - 1);
    };
    res.on('close', done);
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ body, path, headers: req.headers });
      const status = answer(received.length);
      if (status === null) hanging.push({ res, done });
      else {
        done();
        res.writeHead(status).end();
      }
    });
  });
  server.on('connection', (socket) => {
    stats.connections++;
    stats.maxConnections = Math.max(stats.maxConnections, stats.connections);
    socket.on('close', () => stats.connections--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        for (const { res } of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  /** Answers every request left hanging so far with `status`. */
  const release = (status: number) => {
    for (const { res, done } of hanging.splice(0)) {
      done();
      res.writeHead(status).end();
    }
  };
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: `${origin}/hook`, origin, received, stats, release };
}

export const FAST: Partial<RetryPolicy> = { baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 2_000 };

/** `state` defaults to the files of the data dir. */
type OpenOptions = Omit<WebhookServiceOptions, 'state' | 'audit' | 'repos'> & Partial<Pick<WebhookServiceOptions, 'state'>>;

/** A data dir with organisation `acme` holding project `shop`; `open()` starts a WebhookService on it. */
export async function setup(retry: Partial<RetryPolicy> = FAST) {
  const dataDir = mkdtempSync(join(tmpdir(), 'flagops-webhooks-'));
  const repos = new RepositoryRegistry({ dataDir, trust: (await stateIn(dataDir)).commitTrust, watch: false });
  const audit = new AuditRegistry({ repos });
  cleanup.push(async () => {
    await audit.closeAll();
    await repos.closeAll();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const repo = await repos.get('acme');
  await seedShop(repo);
  const open = async (policy: Partial<RetryPolicy> = retry, options: OpenOptions = {}) => {
    const service = await WebhookService.open({
      state: options.state ?? (await stateIn(dataDir)),
      audit,
      repos,
      retry: policy,
      ...options,
    });
    cleanup.push(() => service.close());
    return service;
  };
  let version = 1;
  /** Commits one config change of flag `a` in prod: one audit entry, its message `summary` when given. */
  const change = async (action: 'config_update' | 'kill' = 'config_update', summary?: string) => {
    version++;
    const { commit } = await repo.update(() => ({
      changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: version % 2 === 0, version }) }],
      meta: { ...meta(action, { project: 'shop', flag: 'a', environment: 'prod' }), ...(summary ? { summary } : {}) },
      result: undefined,
    }));
    return commit!;
  };
  return { dataDir, open, change };
}

export async function until<T>(check: () => T | undefined | false, what: string, ms = PROMPTLY_MS): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A logger that keeps what is logged at warn and above, for tests that read the log. */
export function recordingLogger(): Logger & { lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> } {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const make = (base: Record<string, unknown>): Logger => ({
    debug: () => {},
    info: () => {},
    warn: (msg, fields) => lines.push({ level: 'warn', msg, fields: { ...base, ...fields } }),
    error: (msg, fields) => lines.push({ level: 'error', msg, fields: { ...base, ...fields } }),
    child: (fields) => make({ ...base, ...fields }),
  });
  return Object.assign(make({}), { lines });
}
