import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditRegistry } from '../../src/features/audit/audit-registry.js';
import { KillSwitch } from '../../src/features/kill/kill-switch.js';
import { WebhookSender } from '../../src/features/webhooks/webhook-sender.js';
import { WebhookService } from '../../src/features/webhooks/webhook-service.js';
import { layout } from '../../src/foundations/repository/layout.js';
import type { FlagRepository } from '../../src/foundations/storage/index.js';
import { RepositoryRegistry } from '../../src/foundations/storage/repository-registry.js';
import { stateIn } from '../helpers/control-state.js';
import { freePort } from '../helpers/free-port.mjs';
import { ROOT } from '../packages/packed-app.js';
import { agent, configYaml, meta, seedShop } from '../storage/helpers.js';

/** The examples of docs/webhooks.md, run as written against deliveries of the webhook service. */
const DOC = readFileSync(path.join(ROOT, 'docs/webhooks.md'), 'utf8');
const SECRET = 'whsec_docs-example-secret-0123456789';

function example(name: string): string {
  const match = new RegExp(`<!-- webhook-example: ${name} -->\\s*\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``).exec(DOC);
  if (!match) throw new Error(`docs/webhooks.md has no example ${name}`);
  return match[1];
}

let dir: string;
let repos: RepositoryRegistry;
let audit: AuditRegistry;
let repo: FlagRepository;
let service: WebhookService;
const children: ChildProcess[] = [];
const servers: http.Server[] = [];

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'flagops-webhook-docs-'));
  repos = new RepositoryRegistry({
    dataDir: path.join(dir, 'data'),
    trust: (await stateIn(path.join(dir, 'data'))).commitTrust,
    watch: false,
  });
  audit = new AuditRegistry({ repos });
  repo = await repos.get('acme');
  await seedShop(repo);
  service = await WebhookService.open({
    state: await stateIn(path.join(dir, 'data')),
    audit,
    repos,
    retry: { baseDelayMs: 50, maxDelayMs: 100 },
  });
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
  await service.close();
  await audit.closeAll();
  await repos.closeAll();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a docs example as a Node program; resolves with its URL and what it prints once it listens. */
async function startExample(name: string, env: Record<string, string>): Promise<{ url: string; output: () => string }> {
  const file = path.join(dir, `${name}.mjs`);
  writeFileSync(file, example(name));
  const port = await freePort();
  const child = spawn(process.execPath, [file], { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}/flagops`;
  for (let i = 0; ; i++) {
    const ok = await fetch(url, { method: 'POST', body: '{}' }).then(
      () => true,
      () => false,
    );
    if (ok) break;
    if (i > 200) throw new Error(`${name} did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return { url, output: () => out };
}

async function until<T>(check: () => T | undefined | false, what: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const kill = (reason: string) =>
  new KillSwitch({ applyKills: async () => {} }).kill({
    org: 'acme',
    repo,
    projectSlug: 'shop',
    flagKey: 'a',
    environment: 'prod',
    actor: agent,
    reason,
  });

describe('docs/webhooks.md', () => {
  it('the Node receiver accepts signed deliveries and refuses others', async () => {
    const receiver = await startExample('receiver', { FLAGOPS_WEBHOOK_SECRET: SECRET });
    const hook = await service.create('acme', { url: receiver.url, secret: SECRET });
    await kill('error rate above 5%');
    await until(() => service.deliveriesHeld('acme', hook.id)[0]?.status === 'delivered', 'the delivery');
    expect(receiver.output()).toBe('kill shop/a in prod by deploy-bot\n');
    const sender = new WebhookSender({ idlePerReceiver: 1, idleMs: 1_000 });
    const forged = await sender.send(
      receiver.url,
      '{"event":"audit","entry":{}}',
      { 'X-Flagops-Signature': `sha256=${'0'.repeat(64)}` },
      2_000,
    );
    sender.close();
    expect(forged).toEqual({ ok: false, error: 'the receiver answered 401' });
  });

  it('the openssl check tells a delivery from a tampered body', async () => {
    const seen: Array<{ body: string; signature: string }> = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ body, signature: String(req.headers['x-flagops-signature']) });
        res.writeHead(204).end();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await service.create('acme', { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, secret: SECRET });
    await kill('bad deploy');
    const delivery = await until(() => seen[0], 'the delivery');
    const check = (body: string) =>
      new Promise<{ code: number; out: string }>((resolve) => {
        writeFileSync(path.join(dir, 'body.json'), body);
        execFile(
          'sh',
          ['-c', example('openssl')],
          { cwd: dir, env: { ...process.env, FLAGOPS_WEBHOOK_SECRET: SECRET, SIGNATURE: delivery.signature } },
          (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: stdout + stderr }),
        );
      });
    expect(await check(delivery.body)).toEqual({ code: 0, out: 'signed by flagops\n' });
    expect(await check(delivery.body.replace('bad deploy', 'good deploy'))).toEqual({ code: 1, out: 'NOT signed by flagops\n' });
  });

  it('the chat relay posts kills and prod changes as text, and nothing else', async () => {
    const messages: unknown[] = [];
    const chat = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        messages.push(JSON.parse(body));
        res.writeHead(200).end('ok');
      });
    });
    servers.push(chat);
    await new Promise<void>((resolve) => chat.listen(0, '127.0.0.1', resolve));
    const relay = await startExample('relay', {
      FLAGOPS_WEBHOOK_SECRET: SECRET,
      CHAT_WEBHOOK_URL: `http://127.0.0.1:${(chat.address() as AddressInfo).port}/services/T000/B000/XXXX`,
    });
    const hook = await service.create('acme', { url: relay.url, secret: SECRET });
    await repo.update(() => ({
      changes: [{ path: layout.configFile('shop', 'dev', 'b'), content: configYaml({ enabled: true, version: 2 }) }],
      meta: meta('config_update', { project: 'shop', flag: 'b', environment: 'dev' }),
      result: undefined,
    }));
    await kill('error rate above 5%');
    await until(() => {
      const d = service.deliveriesHeld('acme', hook.id);
      return d.length === 2 && d.every((x) => x.status === 'delivered');
    }, 'both deliveries');
    expect(messages).toEqual([{ text: 'flagops: kill shop/a in prod by deploy-bot (error rate above 5%)' }]);
  });
});
