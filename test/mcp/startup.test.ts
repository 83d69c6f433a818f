import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundledServer, bundleServer } from './harness/bundle-server.js';
import { closedPort, silentServer } from './harness/dead-ends.js';
import { type McpService, PROJECT, startMcpService } from './harness/mcp-service.js';
import { connectStdio, type McpEnv, runToExit, textOf } from './harness/spawn-mcp.js';

let server: BundledServer;
let service: McpService;
let env: McpEnv;

beforeAll(async () => {
  [server, service] = await Promise.all([bundleServer(), startMcpService()]);
  env = { FLAGOPS_URL: service.svc.controlUrl, FLAGOPS_AGENT_KEY: service.svc.agent, FLAGOPS_PROJECT: PROJECT };
});

afterAll(async () => {
  await service?.stop();
  await server?.remove();
});

const run = (changes: McpEnv, args: string[] = []) => runToExit(server.file, args, { ...env, ...changes });

describe('flagops-mcp --help', () => {
  it('prints the usage with every setting and exits 0', async () => {
    const out = await runToExit(server.file, ['--help'], {});
    expect(out.code).toBe(0);
    for (const name of ['FLAGOPS_URL', 'FLAGOPS_AGENT_KEY', 'FLAGOPS_PROJECT', '--http', '--port', '--host'])
      expect(out.stdout).toContain(name);
  });
});

describe('a wrong setting stops the start with exit 2, one line on stderr and nothing on stdout', () => {
  it.each([
    ['FLAGOPS_URL missing', { FLAGOPS_URL: undefined }, /^flagops-mcp: FLAGOPS_URL is not set/],
    ['FLAGOPS_AGENT_KEY missing', { FLAGOPS_AGENT_KEY: undefined }, /^flagops-mcp: FLAGOPS_AGENT_KEY is not set/],
    ['FLAGOPS_PROJECT missing', { FLAGOPS_PROJECT: undefined }, /^flagops-mcp: FLAGOPS_PROJECT is not set/],
    ['a malformed URL', { FLAGOPS_URL: 'localhost:4000' }, /^flagops-mcp: FLAGOPS_URL must be http:\/\/ or https:\/\//],
    ['not a URL at all', { FLAGOPS_URL: 'not a url' }, /^flagops-mcp: FLAGOPS_URL is not a URL/],
    ['a URL with /api/v1', { FLAGOPS_URL: 'http://127.0.0.1:4000/api/v1' }, /without \/api\/v1, e\.g\. http:\/\/127\.0\.0\.1:4000/],
    ['an SDK key', { FLAGOPS_AGENT_KEY: 'svc_sdk_0123456789abcdefghij' }, /FLAGOPS_AGENT_KEY is an SDK key/],
    ['a bad project slug', { FLAGOPS_PROJECT: 'Shop!' }, /FLAGOPS_PROJECT must be a project slug/],
    ['a bad timeout', { FLAGOPS_TIMEOUT_MS: 'soon' }, /FLAGOPS_TIMEOUT_MS must be a whole number/],
  ])('%s', async (_name, changes, message) => {
    const out = await run(changes as McpEnv);
    expect(out.stderr).toMatch(message);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
  });

  it('an unknown argument', async () => {
    const out = await run({}, ['--stdio']);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe('flagops-mcp: unknown argument "--stdio" (see --help)\n');
  });
});

describe('the start check against the control plane (exit 1)', () => {
  it('a refused agent key', async () => {
    const out = await run({ FLAGOPS_AGENT_KEY: 'svc_agt_notarealkey0000000000000000' });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(
      /^flagops-mcp: FLAGOPS_AGENT_KEY was refused by the control plane at http:\/\/127\.0\.0\.1:\d+ \(401 unauthorized/,
    );
    expect(out.stdout).toBe('');
  });

  it('a URL where nothing listens', async () => {
    const out = await run({ FLAGOPS_URL: `http://127.0.0.1:${await closedPort()}` });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(
      /^flagops-mcp: cannot reach the control plane at .* \(ECONNREFUSED\); is flagops running and FLAGOPS_URL right\?/,
    );
  });

  it('a control plane that never answers: gives up after FLAGOPS_TIMEOUT_MS instead of hanging', async () => {
    const silent = await silentServer();
    try {
      const started = Date.now();
      const out = await run({ FLAGOPS_URL: silent.url, FLAGOPS_TIMEOUT_MS: '300' });
      expect(out.code).toBe(1);
      expect(out.stderr).toMatch(/did not answer within 300 ms/);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await silent.close();
    }
  });

  it('a project the organisation does not have, naming the ones it has', async () => {
    const out = await run({ FLAGOPS_PROJECT: 'warehouse' });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/project "warehouse" \(FLAGOPS_PROJECT\) not found; the projects this key sees are: shop/);
  });
});

describe('failures after the start are reported per tool call', () => {
  it('a key revoked while serving: isError unauthorized, and the server keeps running', async () => {
    const { body: key } = await service.admin.post('/api/v1/keys', { kind: 'agent', name: 'short-lived' });
    const mcp = await connectStdio(server.file, { ...env, FLAGOPS_AGENT_KEY: key.key } as McpEnv);
    try {
      expect((await mcp.call('list_flags')).isError).toBeFalsy();
      expect((await service.admin.delete(`/api/v1/keys/${key.id}`)).status).toBe(200);

      const result = await mcp.call('list_flags');
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code: 'unauthorized', status: 401 } });
      expect(textOf(result)).toMatch(/refused FLAGOPS_AGENT_KEY/);
      expect((await mcp.client.listTools()).tools.length).toBe(21);
    } finally {
      await mcp.close();
    }
  });

  it('a service that went away: isError unreachable, saying nothing was changed', async () => {
    const mcp = await connectStdio(server.file, env);
    try {
      await service.stop();
      const result = await mcp.call('kill_flag', { key: 'anything', env: 'prod' });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code: 'unreachable' } });
      expect(textOf(result)).toMatch(/Nothing was changed/);
    } finally {
      await mcp.close();
    }
  });
});
