import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpServer } from '../create-mcp-server.js';
import type { HttpSettings } from '../settings.js';
import type { ToolDeps } from '../tools/tool-deps.js';
import { refuseRequest } from './http-guard.js';
import { BodyError, readJsonRpcBody } from './read-body.js';
import type { RunningMcp } from './running.js';

export const MCP_PATH = '/mcp';

export interface RunningHttpMcp extends RunningMcp {
  url: string;
}

/** JSON-RPC's error shape, which MCP clients expect from the transport as well. */
function reject(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: status === 400 ? -32700 : -32000, message }, id: null }));
}

/**
 * Streamable HTTP, stateless: every POST gets a fresh server and transport and stands alone. The tools keep
 * no per-client state (the project and key are the process's), so sessions would add memory and expiry to
 * manage for nothing, and any instance behind a load balancer can answer any request. Without sessions there
 * is no server-to-client stream, so GET and DELETE answer 405, as the MCP spec allows.
 */
export async function serveHttp(deps: ToolDeps, settings: HttpSettings): Promise<RunningHttpMcp> {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== MCP_PATH) return reject(res, 404, `not found: MCP is served at ${MCP_PATH}`);
    const refusal = refuseRequest(req, settings);
    if (refusal) return reject(res, refusal.status, refusal.message, refusal.headers);
    if (req.method !== 'POST') return reject(res, 405, 'method not allowed: this server is stateless, use POST', { allow: 'POST' });

    const body = await readJsonRpcBody(req);
    const server = createMcpServer(deps);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (err instanceof BodyError) return reject(res, err.status, err.message);
      deps.logger.error('MCP HTTP request failed', { err });
      if (!res.headersSent) reject(res, 500, 'internal error');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(settings.port, settings.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const host = settings.host.includes(':') && !settings.host.startsWith('[') ? `[${settings.host}]` : settings.host;
  const url = `http://${host}:${port}${MCP_PATH}`;
  deps.logger.info('flagops-mcp listening', { url, project: deps.scope.slug, auth: settings.token ? 'token' : 'none' });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
