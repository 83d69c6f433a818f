import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundledServer, bundleServer } from './harness/bundle-server.js';
import { type McpService, PROJECT, startMcpService } from './harness/mcp-service.js';
import { connectStdio, type StdioSession, textOf } from './harness/spawn-mcp.js';

/**
 * What the proxy does with a write (reads pass): forward it, then cut the client's connection or answer `{}`; or
 * answer 503 unavailable without forwarding it, as a control plane whose repository cannot be written does.
 */
type WriteMode = 'pass' | 'cut' | 'empty-object' | 'unavailable';

/**
 * A proxy in front of the control plane, as a load balancer or a restarting control plane can behave: the write
 * reaches flagops and is made, and what comes back to flagops-mcp is a reset connection or something else.
 */
async function startProxy(target: string) {
  const proxy = { mode: 'pass' as WriteMode, url: '', close: async () => {} };
  const server = createServer((req, res) => {
    if (req.method !== 'GET' && proxy.mode === 'unavailable') {
      res.writeHead(503, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          error: { code: 'unavailable', message: 'the flags repository cannot be written: read-only file system (EROFS)' },
        }),
      );
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const upstream = request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (c: Buffer) => body.push(c));
        answer.on('end', () => {
          const mode = req.method === 'GET' ? 'pass' : proxy.mode;
          if (mode === 'cut') return req.socket.destroy();
          if (mode === 'empty-object') {
            res.writeHead(200, { 'content-type': 'application/json' });
            return res.end('{}');
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(body));
        });
      });
      upstream.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}

let server: BundledServer;
let service: McpService;
let proxy: Awaited<ReturnType<typeof startProxy>>;
let mcp: StdioSession;

beforeAll(async () => {
  [server, service] = await Promise.all([bundleServer(), startMcpService()]);
  await service.flag('checkout-v2', { prod: { enabled: true, rolloutPct: 10 } });
  proxy = await startProxy(service.svc.controlUrl);
  mcp = await connectStdio(server.file, { FLAGOPS_URL: proxy.url, FLAGOPS_AGENT_KEY: service.svc.agent, FLAGOPS_PROJECT: PROJECT });
});

afterAll(async () => {
  await mcp?.close();
  await proxy?.close();
  await service?.stop();
  await server?.remove();
});

const prod = async () => (await service.admin.get(`/api/v1/flags/lookup?projectSlug=${PROJECT}&key=checkout-v2`)).body.environments.prod;

describe('a write whose answer is lost on the way back', () => {
  it('is not reported unreachable with "nothing was changed", since it was made: the agent is told to read before retrying', async () => {
    proxy.mode = 'cut';
    const result = await mcp.call('set_rollout', { key: 'checkout-v2', env: 'prod', rolloutPct: 30 });
    proxy.mode = 'pass';

    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: 'connection_lost' } });
    expect(textOf(result)).not.toMatch(/nothing was changed/i);
    expect(textOf(result)).toContain('the change may or may not have been made');
    const { next } = (result.structuredContent as { error: { next: string } }).error;
    expect(next).toMatch(/get_flag.*list_proposals.*before you retry/);
    expect(await prod()).toMatchObject({ rolloutPct: 30 });
  });

  it('answered 200 with something that is not a flag is bad_response saying the write may have been made, not internal', async () => {
    proxy.mode = 'empty-object';
    const kill = await mcp.call('kill_flag', { key: 'checkout-v2', env: 'prod', reason: 'errors' });
    const rollout = await mcp.call('set_rollout', { key: 'checkout-v2', env: 'prod', rolloutPct: 40 });
    proxy.mode = 'pass';

    for (const result of [kill, rollout]) {
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code: 'bad_response', status: 200 } });
      expect(textOf(result)).toMatch(/with JSON that is not a flag; the change may or may not have been made/);
    }
    expect(await prod()).toMatchObject({ killed: true, rolloutPct: 40 });
    expect(mcp.stderr()).not.toContain('tool failed unexpectedly');
  });
});

describe('a control plane that cannot write now (503 unavailable)', () => {
  it('is reported with what to do: nothing was changed, retry later', async () => {
    proxy.mode = 'unavailable';
    const result = await mcp.call('set_rollout', { key: 'checkout-v2', env: 'prod', rolloutPct: 60 });
    proxy.mode = 'pass';

    expect(result.structuredContent).toMatchObject({ error: { code: 'unavailable', status: 503 } });
    const { next } = (result.structuredContent as { error: { next: string } }).error;
    expect(next).toMatch(/nothing was changed\. Retry in a little while/);
    expect(await prod()).toMatchObject({ rolloutPct: 40 });
  });
});
