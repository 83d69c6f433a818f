import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { getAuditLog } from './tools/audit-tool.js';
import { promoteFlag, scheduleRollout, setRollout, updateFlagConfig } from './tools/config-tools.js';
import type { McpTool, ToolDeps } from './tools/define-tool.js';
import { explainEvaluationTool } from './tools/explain-tool.js';
import { createFlag, getFlag, listFlags, updateFlag } from './tools/flag-tools.js';
import { clearKill, killFlag } from './tools/kill-tools.js';
import { archiveFlag, listStaleFlags } from './tools/lifecycle-tools.js';
import { listProposals, previewChange } from './tools/proposal-tools.js';
import { deleteSegment, getSegment, listSegments, setPrerequisites, setVariants, upsertSegment } from './tools/targeting-tools.js';

/**
 * The package version, read from package.json beside dist/ (src/apps/mcp and dist/apps/mcp are both three levels down).
 * Read at run time because package.json lies outside the compiled tree; a bundled copy elsewhere says so.
 */
function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { name?: string; version?: string };
    return pkg.name === 'flagops' && pkg.version ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const MCP_SERVER_VERSION = readVersion();

/** Every tool, reads first: the order clients list them in. */
export const ALL_TOOLS: readonly McpTool[] = [
  listFlags,
  getFlag,
  getAuditLog,
  explainEvaluationTool,
  listSegments,
  getSegment,
  listProposals,
  previewChange,
  listStaleFlags,
  killFlag,
  clearKill,
  setRollout,
  updateFlagConfig,
  setVariants,
  setPrerequisites,
  upsertSegment,
  deleteSegment,
  promoteFlag,
  scheduleRollout,
  createFlag,
  updateFlag,
  archiveFlag,
];

const INSTRUCTIONS = [
  'flagops feature flags of one project, through its control plane. Flags are named by key; environments are dev, staging and prod.',
  'Read with list_flags, get_flag, get_audit_log, explain_evaluation, list_segments and get_segment. Every write applies immediately and is audited under this agent key.',
  'A/B/n tests: set_variants; reusable audiences: upsert_segment and rules with in_segment; dependencies between flags: set_prerequisites.',
  'kill_flag is the emergency stop (always give a reason). Pass expectedVersion from get_flag to writes; on version_conflict re-read and retry.',
  'Promoting into prod needs a human, unless the project requires approval there: then such a write is kept as a proposal (the answer says NOT APPLIED YET and names it) until an admin key or a dashboard session approves it.',
  'preview_change shows a change and its impact on users without making it; list_proposals shows what waits for approval.',
  "update_flag sets a flag's name, description and lifecycle (type, owner, expiry).",
  'Cleanup: list_stale_flags finds flags that are expired, rolled out or unused, with why; archive_flag archives one (agent keys only through a proposal where the project requires approval).',
].join(' ');

/** One MCP server with every tool, bound to one project; the stdio and HTTP transports each make their own. */
export function createMcpServer(deps: ToolDeps): McpServer {
  const server = new McpServer({ name: 'flagops', version: MCP_SERVER_VERSION }, { instructions: INSTRUCTIONS });
  for (const tool of ALL_TOOLS) tool.register(server, deps);
  return server;
}
