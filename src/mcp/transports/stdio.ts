import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer } from '../create-mcp-server.js';
import type { ToolDeps } from '../tools/tool-deps.js';
import type { RunningMcp } from './running.js';

/**
 * MCP over this process's stdin/stdout; stdout carries nothing but protocol (logs go to stderr).
 * `onEnded` runs when the session is over: the client closed our stdin (MCP spec, "stdio: shutdown"), or the
 * transport closed itself (an oversized message). Either way there is nothing left to serve.
 */
export async function serveStdio(deps: ToolDeps, onEnded: () => void): Promise<RunningMcp> {
  const server = createMcpServer(deps);
  process.stdin.once('end', onEnded);
  server.server.onclose = onEnded;
  await server.connect(new StdioServerTransport());
  deps.logger.info('flagops-mcp serving on stdio', { project: deps.scope.slug });
  return { close: () => server.close() };
}
