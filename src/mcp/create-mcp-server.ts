import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ALL_TOOLS } from './tools/all-tools.js';
import type { ToolDeps } from './tools/tool-deps.js';
import { MCP_SERVER_VERSION } from './version.js';

const INSTRUCTIONS = [
  'flagops feature flags of one project, through its control plane. Flags are named by key; environments are dev, staging and prod.',
  'Read with list_flags, get_flag, get_audit_log and explain_evaluation. Every write applies immediately and is audited under this agent key.',
  'kill_flag is the emergency stop (always give a reason). Pass expectedVersion from get_flag to writes; on version_conflict re-read and retry.',
  'Promoting into prod needs a human.',
].join(' ');

/** One MCP server with every tool, bound to one project; the stdio and HTTP transports each make their own. */
export function createMcpServer(deps: ToolDeps): McpServer {
  const server = new McpServer({ name: 'flagops', version: MCP_SERVER_VERSION }, { instructions: INSTRUCTIONS });
  for (const tool of ALL_TOOLS) tool.register(server, deps);
  return server;
}
