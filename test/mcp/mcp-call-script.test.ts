import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '../control-plane/fixtures.js';
import { httpClient } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { freePort } from '../service/service-process.js';

/**
 * scripts/mcp-call.mjs, the README's MCP client for the shell: it starts the built flagops-mcp over stdio. When
 * the server refuses to start, the user sees why (the server's own stderr), not the transport's "Connection closed".
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

function mcpCall(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'scripts/mcp-call.mjs'), ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}

describe('scripts/mcp-call.mjs', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    await createProject(httpClient(svc.controlUrl, svc.admin), 'shop');
  });
  afterAll(() => svc.stop());

  it('lists the tools with a valid agent key', async () => {
    const out = await mcpCall({ FLAGOPS_URL: svc.controlUrl, FLAGOPS_PROJECT: 'shop', FLAGOPS_AGENT_KEY: svc.agent }, 'list');
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^kill_flag: /m);
  });

  it('shows the server’s refusal of a wrong key, exit code 1', async () => {
    const wrong = 'svc_agt_wrongwrongwrongwrongwrongwrong';
    const out = await mcpCall({ FLAGOPS_URL: svc.controlUrl, FLAGOPS_PROJECT: 'shop', FLAGOPS_AGENT_KEY: wrong }, 'list');
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(
      `flagops-mcp: FLAGOPS_AGENT_KEY was refused by the control plane at ${svc.controlUrl} (401 unauthorized: a valid credential is required)`,
    );
    expect(out.stderr).not.toMatch(/McpError|\n\s+at /);
  });

  it('shows why the server could not reach the control plane', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const out = await mcpCall({ FLAGOPS_URL: nobody, FLAGOPS_PROJECT: 'shop', FLAGOPS_AGENT_KEY: svc.agent }, 'list');
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`flagops-mcp: cannot reach the control plane at ${nobody} (ECONNREFUSED)`);
  });
});
