import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export interface McpEnv {
  FLAGOPS_URL?: string;
  FLAGOPS_AGENT_KEY?: string;
  FLAGOPS_PROJECT?: string;
  [name: string]: string | undefined;
}

export interface StdioSession {
  client: Client;
  /** Everything the server wrote on stderr so far (its JSON log lines). */
  stderr(): string;
  /** A tool call, with the result typed as a plain (non-task) tool result. */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

function definedOnly(env: McpEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** The real MCP client, spawning the built server as a child process over stdio, as an MCP host does. */
export async function connectStdio(serverFile: string, env: McpEnv): Promise<StdioSession> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [serverFile], env: definedOnly(env), stderr: 'pipe' });
  let stderr = '';
  // Drained continuously: a full stderr pipe would block the child's synchronous writes.
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'flagops-mcp-test', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (err) {
    throw new Error(`could not connect: ${(err as Error).message}\nserver stderr:\n${stderr}`);
  }
  return {
    client,
    stderr: () => stderr,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
  };
}

export interface ProcessOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the server to its exit (a start that must fail); killed after `timeoutMs` so a hang fails the test. */
export function runToExit(serverFile: string, args: string[], env: McpEnv, timeoutMs = 15_000): Promise<ProcessOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [serverFile, ...args], {
      env: { PATH: process.env.PATH ?? '', ...definedOnly(env) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`flagops-mcp did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The text blocks of a tool result, joined. */
export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}
