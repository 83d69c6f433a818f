export const USAGE = `flagops-mcp: the flagops control plane as MCP tools for AI agents

Usage:
  flagops-mcp                                  speak MCP over stdio (for a local MCP client)
  flagops-mcp --http [--port N] [--host H]     serve MCP over Streamable HTTP at http://H:N/mcp
  flagops-mcp --help

Options:
  --http         Streamable HTTP instead of stdio (stateless: every POST /mcp stands alone)
  --port N       HTTP port (default 4002; 0 picks a free one, logged on stderr)
  --host H       HTTP interface (default 127.0.0.1); any other than loopback needs FLAGOPS_MCP_TOKEN
  -h, --help     this text

Environment:
  FLAGOPS_URL          required: the control plane's origin, e.g. http://127.0.0.1:4000 (without /api/v1)
  FLAGOPS_AGENT_KEY    required: an agent key (svc_agt_...); every change is audited under its prefix
  FLAGOPS_PROJECT      required: the slug of the project the tools act on
  FLAGOPS_TIMEOUT_MS   optional: per control-plane request (default 10000)
  FLAGOPS_MCP_TOKEN    optional: with --http, clients must send "Authorization: Bearer <token>"
  FLAGOPS_LOG_LEVEL    optional: debug, info (default), warn or error; logs are JSON lines on stderr

At start it checks the settings with one request to the control plane and exits 1 with a message on
stderr when the URL is unreachable, the key is refused or the project does not exist; exit 2 is a wrong
command line or setting. See docs/mcp.md.
`;
