#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
// Calls one tool of `flagops-mcp` through the real MCP client over stdio and prints the result: a way to try
// the MCP server without an AI agent. Settings come from FLAGOPS_URL, FLAGOPS_AGENT_KEY and FLAGOPS_PROJECT.
// It starts this checkout's built server (package.json's `flagops-mcp` bin) with node, as `npx flagops-mcp`
// would, without npx's first-run install of the checkout into its cache.
//   node scripts/mcp-call.mjs list                       the tools
//   node scripts/mcp-call.mjs kill_flag '{"key":"checkout-v2","env":"prod","reason":"error rate"}'
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

const [tool, json = '{}'] = process.argv.slice(2);
if (!tool || tool === '--help') {
  console.log("usage: node scripts/mcp-call.mjs list | <tool> ['<json arguments>']");
  process.exit(tool ? 0 : 2);
}
let args;
try {
  args = JSON.parse(json);
} catch (err) {
  console.error(`mcp-call: the arguments are not JSON (${err.message}): ${json}`);
  process.exit(2);
}
const root = new URL('../', import.meta.url);
const server = fileURLToPath(new URL(JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).bin['flagops-mcp'], root));
// The server's stderr is kept, not shown: it holds its log lines. When the server stops before answering, its
// last words there (a refused key, an unreachable control plane) are what the user needs, not the client's
// "Connection closed".
const transport = new StdioClientTransport({ command: process.execPath, args: [server], env: process.env, stderr: 'pipe' });
let serverSaid = '';
transport.stderr?.on('data', (chunk) => {
  serverSaid = (serverSaid + chunk).slice(-64 * 1024);
});
const client = new Client({ name: 'flagops-mcp-call', version: '1.0.0' });
try {
  await client.connect(transport);
  if (tool === 'list') {
    for (const t of (await client.listTools()).tools) console.log(`${t.name}: ${t.description.split('\n')[0]}`);
  } else {
    const result = await client.callTool({ name: tool, arguments: args });
    for (const part of result.content) if (part.type === 'text') console.log(part.text);
    process.exitCode = result.isError ? 1 : 0;
  }
} catch (err) {
  // The close is reported once the server's stderr has ended, so serverSaid is whole here.
  const closed = err?.code === ErrorCode.ConnectionClosed && serverSaid.trim() !== '';
  console.error(closed ? serverSaid.trim() : `mcp-call: ${err instanceof Error ? err.message : err}`);
  process.exitCode = 1;
} finally {
  await client.close();
}
