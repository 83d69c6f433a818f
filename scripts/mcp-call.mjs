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

const [tool, json = '{}'] = process.argv.slice(2);
if (!tool || tool === '--help') {
  console.log("usage: node scripts/mcp-call.mjs list | <tool> ['<json arguments>']");
  process.exit(tool ? 0 : 2);
}
const root = new URL('../', import.meta.url);
const server = fileURLToPath(new URL(JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).bin['flagops-mcp'], root));
const transport = new StdioClientTransport({ command: process.execPath, args: [server], env: process.env, stderr: 'ignore' });
const client = new Client({ name: 'flagops-mcp-call', version: '1.0.0' });
await client.connect(transport);
try {
  if (tool === 'list') {
    for (const t of (await client.listTools()).tools) console.log(`${t.name}: ${t.description.split('\n')[0]}`);
  } else {
    const result = await client.callTool({ name: tool, arguments: JSON.parse(json) });
    for (const part of result.content) if (part.type === 'text') console.log(part.text);
    process.exitCode = result.isError ? 1 : 0;
  }
} finally {
  await client.close();
}
