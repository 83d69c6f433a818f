import { afterAll, beforeAll } from 'vitest';
import { type BundledServer, bundleServer } from './bundle-server.js';
import { type McpService, PROJECT, startMcpService } from './mcp-service.js';
import { connectStdio, type StdioSession } from './spawn-mcp.js';

export interface McpSuite {
  server: BundledServer;
  service: McpService;
  /** The MCP client connected to flagops-mcp over stdio, with the bootstrap agent key and project "shop". */
  mcp: StdioSession;
}

/**
 * For a test file: the bundled server, a started service and a connected stdio client, torn down after
 * the file. Read the returned object's fields inside tests (they are set in beforeAll).
 */
export function useMcpSuite(): McpSuite {
  const suite = {} as McpSuite;
  beforeAll(async () => {
    [suite.server, suite.service] = await Promise.all([bundleServer(), startMcpService()]);
    suite.mcp = await connectStdio(suite.server.file, {
      FLAGOPS_URL: suite.service.svc.controlUrl,
      FLAGOPS_AGENT_KEY: suite.service.svc.agent,
      FLAGOPS_PROJECT: PROJECT,
    });
  });
  afterAll(async () => {
    await suite.mcp?.close();
    await suite.service?.stop();
    await suite.server?.remove();
  });
  return suite;
}
