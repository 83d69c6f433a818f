import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { PROJECT } from './harness/mcp-service.js';
import { useMcpSuite } from './harness/mcp-suite.js';

const suite = useMcpSuite();

const messages = [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_flags', arguments: {} } },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_flag', arguments: { key: 'missing' } } },
];

/** The built server as an MCP host starts it: its settings in the environment, nothing else. */
const spawnServer = () =>
  spawn(process.execPath, [suite.server.file], {
    env: {
      PATH: process.env.PATH ?? '',
      FLAGOPS_URL: suite.service.svc.controlUrl,
      FLAGOPS_AGENT_KEY: suite.service.svc.agent,
      FLAGOPS_PROJECT: PROJECT,
    },
  });

// In stdio mode stdout carries nothing but protocol. The SDK client would choke on a stray line, but only this
// reads the raw stream and can say which line it was.
describe('flagops-mcp over stdio, byte for byte', () => {
  it('writes only JSON-RPC messages on stdout, logs JSON lines on stderr, and exits 0 when stdin closes', async () => {
    const child = spawnServer();
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exited = once(child, 'close');
    const lines: string[] = [];
    const reader = createInterface({ input: child.stdout });
    const answered = new Promise<void>((resolve) =>
      reader.on('line', (line) => {
        lines.push(line);
        if (lines.length === 3) resolve();
      }),
    );
    for (const m of messages) child.stdin.write(`${JSON.stringify(m)}\n`);
    await answered;
    child.stdin.end();
    const [code] = await exited;

    // Requests run concurrently, so answers may come in any order.
    const parsed = lines
      .map((l) => JSON.parse(l) as { jsonrpc: string; id: number; result: { isError?: boolean } })
      .sort((a, b) => a.id - b.id);
    expect(parsed.map((m) => [m.jsonrpc, m.id])).toEqual([
      ['2.0', 1],
      ['2.0', 2],
      ['2.0', 3],
    ]);
    expect(parsed[2].result.isError).toBe(true);
    expect(code).toBe(0);
    const logs = stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; service: string });
    expect(logs.map((l) => l.msg)).toEqual(['flagops-mcp serving on stdio', 'tool call', 'tool call']);
    expect(stderr).not.toContain(suite.service.svc.agent);
  });

  it('answers a line that is not JSON (-32700) or not JSON-RPC (-32600) with id null, and params that do not fit with -32602 naming the field', async () => {
    const child = spawnServer();
    child.stderr.resume();
    const exited = once(child, 'close');
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
    const sent = [
      JSON.stringify(messages[0]),
      JSON.stringify(messages[1]),
      'this is not json',
      JSON.stringify({ hello: 'world' }),
      JSON.stringify({ jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'list_flags', arguments: 'str' } }),
      JSON.stringify({ jsonrpc: '2.0', id: 13, method: 'tools/call' }),
      JSON.stringify(messages[2]),
    ];
    child.stdin.end(sent.map((line) => `${line}\n`).join(''));
    const [code] = await exited;

    expect(code).toBe(0);
    const answers = lines.map((l) => JSON.parse(l) as { id: number | null; result?: unknown; error?: { code: number; message: string } });
    const unread = answers.filter((a) => a.id === null).map((a) => a.error?.code);
    expect(unread.sort((x = 0, y = 0) => x - y)).toEqual([-32700, -32600]);
    const badArguments = answers.find((a) => a.id === 12);
    expect(badArguments?.error?.code).toBe(-32602);
    expect(badArguments?.error?.message).toMatch(/^Invalid params for tools\/call: .* at request\.params\.arguments$/);
    const noParams = answers.find((a) => a.id === 13);
    expect(noParams?.error?.code).toBe(-32602);
    expect(noParams?.error?.message).toMatch(/^Invalid params for tools\/call: .* at request\.params$/);
    // The session goes on: the next call is served.
    expect(answers.filter((a) => a.result !== undefined).map((a) => a.id)).toEqual(expect.arrayContaining([1, 2]));
  });

  it('answers a message over the size limit with -32600 and reads the messages after it, rather than end the session', async () => {
    const child = spawnServer();
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = once(child, 'close');
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      id: 20,
      method: 'tools/call',
      params: { name: 'list_flags', arguments: { pad: 'x'.repeat(12 * 1024 * 1024) } },
    });
    child.stdin.write(`${JSON.stringify(messages[0])}\n${JSON.stringify(messages[1])}\n`);
    child.stdin.write(`${huge}\n`);
    child.stdin.end(`${JSON.stringify(messages[2])}\n`);
    const [code] = await exited;

    expect(code).toBe(0);
    const answers = lines.map((l) => JSON.parse(l) as { id: number | null; result?: unknown; error?: { code: number; message: string } });
    const refused = answers.find((a) => a.id === null);
    expect(refused?.error?.code).toBe(-32600);
    expect(refused?.error?.message).toMatch(/over the limit of \d+ bytes/);
    expect(answers.some((a) => a.id === 20)).toBe(false);
    // The call sent after it is served.
    expect(answers.filter((a) => a.result !== undefined).map((a) => a.id)).toEqual(expect.arrayContaining([1, 2]));
    expect(stderr).toContain('a message over the size limit was not read');
  }, 60_000);

  it('answers the calls a client sent before closing stdin at once, then exits 0', async () => {
    const child = spawnServer();
    child.stderr.resume();
    const exited = once(child, 'close');
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
    // As a script piping its requests in does: everything written, then stdin closed, no answer awaited.
    child.stdin.end(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
    const [code] = await exited;

    expect(code).toBe(0);
    expect(lines.map((l) => (JSON.parse(l) as { id: number }).id).sort()).toEqual([1, 2, 3]);
  });
});
