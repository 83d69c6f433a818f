import { request } from 'node:http';
import type { AuditEntry } from '@flagops/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundledServer, bundleServer } from './harness/bundle-server.js';
import { type HttpMcpProcess, startHttpMcp } from './harness/http-mcp.js';
import { type McpService, PROJECT, startMcpService } from './harness/mcp-service.js';
import { type McpEnv, runToExit, textOf } from './harness/spawn-mcp.js';

let server: BundledServer;
let service: McpService;
let env: McpEnv;

beforeAll(async () => {
  [server, service] = await Promise.all([bundleServer(), startMcpService()]);
  env = { FLAGOPS_URL: service.svc.controlUrl, FLAGOPS_AGENT_KEY: service.svc.agent, FLAGOPS_PROJECT: PROJECT };
  await service.flag('checkout-v2', { staging: { enabled: true, rolloutPct: 100 } });
});

afterAll(async () => {
  await service?.stop();
  await server?.remove();
});

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'flagops-mcp-http-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** A raw request, for what the SDK client cannot send (another Host header, a GET). */
function raw(
  url: string,
  options: { method: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method, headers: options.headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const POST_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('flagops-mcp --http (Streamable HTTP, stateless)', () => {
  let http: HttpMcpProcess;
  beforeAll(async () => {
    http = await startHttpMcp(server.file, env);
  });
  afterAll(async () => {
    await http?.stop();
  });

  it('serves the same tools to the SDK client, at /mcp on loopback', async () => {
    expect(http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = await connect(http.url);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('kill_flag');
    } finally {
      await client.close();
    }
  });

  it('kills through the control plane, audited under the agent key', async () => {
    const client = await connect(http.url);
    try {
      const kill = (await client.callTool({
        name: 'kill_flag',
        arguments: { key: 'checkout-v2', env: 'staging', reason: 'over http' },
      })) as CallToolResult;
      expect(kill.isError, textOf(kill)).toBeFalsy();
      const sdk = await service.sdkKey('staging');
      expect(await service.evaluate(sdk, 'checkout-v2')).toMatchObject({ reason: 'killed' });
      const audit = (await client.callTool({ name: 'get_audit_log', arguments: { key: 'checkout-v2', action: 'kill' } })) as CallToolResult;
      expect((audit.structuredContent as { entries: AuditEntry[] }).entries[0]).toMatchObject({
        environment: 'staging',
        reason: 'over http',
        actor: { type: 'agent', keyPrefix: service.svc.agent.slice(0, 16) },
      });
    } finally {
      await client.close();
    }
  });

  it('answers concurrent clients independently', async () => {
    const clients = await Promise.all([connect(http.url), connect(http.url), connect(http.url)]);
    try {
      const results = (await Promise.all(
        clients.map((c) => c.callTool({ name: 'get_flag', arguments: { key: 'checkout-v2' } })),
      )) as CallToolResult[];
      for (const r of results) expect(r.structuredContent).toMatchObject({ flag: { key: 'checkout-v2' } });
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('refuses a foreign Host header (DNS rebinding) with 403', async () => {
    const res = await raw(http.url, { method: 'POST', headers: { ...POST_HEADERS, host: 'attacker.example' }, body: INITIALIZE });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ jsonrpc: '2.0', error: { message: 'Host "attacker.example" is not allowed' } });
  });

  it("refuses a request from another site's page (its Origin) with 403, and serves its own and loopback pages", async () => {
    const foreign = await raw(http.url, { method: 'POST', headers: { ...POST_HEADERS, origin: 'http://evil.example' }, body: INITIALIZE });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body)).toMatchObject({ jsonrpc: '2.0', error: { message: 'Origin "http://evil.example" is not allowed' } });
    expect((await raw(http.url, { method: 'POST', headers: { ...POST_HEADERS, origin: 'null' }, body: INITIALIZE })).status).toBe(403);
    for (const origin of [new URL(http.url).origin, 'http://localhost:3000']) {
      const res = await raw(http.url, { method: 'POST', headers: { ...POST_HEADERS, origin }, body: INITIALIZE });
      expect(res.status, origin).toBe(200);
    }
  });

  it('answers tools/call with params that do not fit with -32602 naming the field, not -32603 with raw issues', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_flags', arguments: 'str' } });
    const res = await raw(http.url, { method: 'POST', headers: POST_HEADERS, body });
    const answer = JSON.parse(res.body) as { id: number; error: { code: number; message: string } };
    expect(answer).toMatchObject({ id: 7, error: { code: -32602 } });
    expect(answer.error.message).toMatch(/^Invalid params for tools\/call: .* at request\.params\.arguments$/);
  });

  it('answers GET with 405: there is no session stream in stateless mode', async () => {
    const res = await raw(http.url, { method: 'GET', headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
  });

  it('answers a body that is not JSON with a JSON-RPC parse error', async () => {
    const res = await raw(http.url, { method: 'POST', headers: POST_HEADERS, body: '{nope' });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: -32700 } });
  });

  it('refuses a body over 1 MiB with 413 and a JSON-RPC error, before any tool runs', async () => {
    const res = await raw(http.url, { method: 'POST', headers: POST_HEADERS, body: `"${'x'.repeat(1024 * 1024)}"` });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ jsonrpc: '2.0', error: { message: 'the body is larger than 1048576 bytes' } });
  });

  it('answers headers too large with 431 and a JSON error body, as every flagops port does', async () => {
    const res = await raw(http.url, { method: 'POST', headers: { ...POST_HEADERS, 'x-padding': 'x'.repeat(20_000) }, body: INITIALIZE });
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'invalid_input' } });
  });

  it('will not start on a port in use: one line on stderr and exit 1, no stack', async () => {
    const { port } = new URL(http.url);
    const out = await runToExit(server.file, ['--http', '--port', port], env);
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(`flagops-mcp: port ${port} on 127.0.0.1 is in use; stop what uses it, or choose another with --port\n`);
  });

  it('stops on SIGTERM with exit 0', async () => {
    const other = await startHttpMcp(server.file, env);
    expect(await other.stop()).toBe(0);
  });
});

describe('flagops-mcp --http with FLAGOPS_MCP_TOKEN', () => {
  const token = 'a-long-shared-secret-for-the-test';
  let http: HttpMcpProcess;
  beforeAll(async () => {
    http = await startHttpMcp(server.file, { ...env, FLAGOPS_MCP_TOKEN: token });
  });
  afterAll(async () => {
    await http?.stop();
  });

  it('refuses a client without the token with 401', async () => {
    await expect(connect(http.url)).rejects.toThrow(/Authorization: Bearer <FLAGOPS_MCP_TOKEN> is required/);
    await expect(connect(http.url, { authorization: 'Bearer wrong' })).rejects.toThrow(/FLAGOPS_MCP_TOKEN/);
    const res = await raw(http.url, { method: 'POST', headers: { ...POST_HEADERS, authorization: 'Bearer wrong' }, body: INITIALIZE });
    expect(res.status).toBe(401);
  });

  it.each(['Bearer', 'bearer', 'BEARER'])('serves a client that sends it (scheme written %s)', async (scheme) => {
    const client = await connect(http.url, { authorization: `${scheme} ${token}` });
    try {
      const result = (await client.callTool({ name: 'list_flags', arguments: {} })) as CallToolResult;
      expect(textOf(result)).toContain('checkout-v2');
    } finally {
      await client.close();
    }
  });
});

describe('flagops-mcp --http on a non-loopback interface', () => {
  it('will not start without FLAGOPS_MCP_TOKEN: anyone on the network would act with the agent key', async () => {
    const out = await runToExit(server.file, ['--http', '--host', '0.0.0.0', '--port', '0'], env);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/--host 0\.0\.0\.0 is not a loopback address: set FLAGOPS_MCP_TOKEN/);
  });
});
