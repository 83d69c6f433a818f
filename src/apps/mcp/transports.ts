import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { bearerToken } from '../../foundations/auth/key-format.js';
import { toHttpError } from '../../foundations/errors/http-status.js';
import { FlagopsError } from '../../foundations/errors/kinds.js';
import { answerClientError } from '../../foundations/http/client-errors.js';
import { createTimedServer } from '../../foundations/http/connection-limits.js';
import { readJsonBody } from '../../foundations/http/read-json-body.js';
import { createMcpServer } from './create-mcp-server.js';
import { answerOverlongLine, answerUnreadableLines, refuseMalformedParams } from './protocol-errors.js';
import { type HttpSettings, isLoopback } from './settings.js';
import { MAX_STDIN_MESSAGE_BYTES, withoutOverlongLines } from './stdin-lines.js';
import type { ToolDeps } from './tools/define-tool.js';

/** A started transport; close() stops it and lets the process end. */
export interface RunningMcp {
  close(): Promise<void>;
}

/**
 * MCP over this process's stdin/stdout; stdout carries nothing but protocol (logs go to stderr).
 * `onEnded` runs when the session is over: the client closed our stdin (MCP spec, "stdio: shutdown"), or the
 * transport closed itself. A message over the size limit is answered and left out (withoutOverlongLines). Either way there is nothing left to serve.
 */
export async function serveStdio(deps: ToolDeps, onEnded: () => void): Promise<RunningMcp> {
  const server = createMcpServer(deps);
  const input = withoutOverlongLines(process.stdin, MAX_STDIN_MESSAGE_BYTES, (bytes) => {
    deps.logger.warn('a message over the size limit was not read', { bytes, limitBytes: MAX_STDIN_MESSAGE_BYTES });
    answerOverlongLine(transport, bytes, MAX_STDIN_MESSAGE_BYTES);
  });
  const transport = new StdioServerTransport(input, process.stdout);
  await server.connect(transport);
  refuseMalformedParams(transport);
  answerUnreadableLines(transport);
  // A client may send a call and close stdin at once (a script piping requests in): the calls read before the
  // end are answered before the session ends, or a kill sent that way would be dropped unanswered.
  const answered = answeredRequests(transport);
  const end = () => void answered().then(onEnded);
  process.stdin.once('end', end);
  server.server.onclose = end;
  deps.logger.info('flagops-mcp serving on stdio', { project: deps.scope.slug });
  return { close: () => server.close() };
}

/** Counts the requests `transport` has read and not yet answered; the function returned settles once none is left. */
function answeredRequests(transport: Transport): () => Promise<void> {
  const open = new Set<string | number>();
  let idle: (() => void) | undefined;
  const read = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('method' in message && 'id' in message) open.add(message.id);
    read?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    try {
      await send(message, options);
    } finally {
      if (!('method' in message) && message.id !== undefined && open.delete(message.id) && open.size === 0) idle?.();
    }
  };
  return () =>
    open.size === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          idle = resolve;
        });
}

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

    // The SDK would read a body of any size; this reader bounds it (a tool call is a few KiB) as every other endpoint does.
    const body = await readJsonBody(req);
    if (body === undefined) return reject(res, 400, 'the body is empty: send a JSON-RPC message');
    const server = createMcpServer(deps);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    refuseMalformedParams(transport);
    await transport.handleRequest(req, res, body);
  };

  const http = createTimedServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (err instanceof FlagopsError) return reject(res, toHttpError(err).status, err.message);
      deps.logger.error('MCP HTTP request failed', { err });
      if (!res.headersSent) reject(res, 500, 'internal error');
      else res.destroy();
    });
  });
  // What the HTTP parser refuses (headers too large, not HTTP) gets the JSON error body too, not a bare status.
  http.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    const refused = (err: NodeJS.ErrnoException) => reject(listenError(err, settings));
    http.once('error', refused);
    http.listen(settings.port, settings.host, () => {
      http.off('error', refused);
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

/** The port or address of --port/--host cannot be had: a start-up failure said in one line, not a stack. */
export class HttpListenError extends Error {
  override name = 'HttpListenError';
}

function listenError(err: NodeJS.ErrnoException, settings: HttpSettings): Error {
  const where = `port ${settings.port} on ${settings.host}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return new HttpListenError(`${where} is in use; stop what uses it, or choose another with --port`);
    case 'EACCES':
      return new HttpListenError(`not allowed to listen on ${where}; choose a port this user may open (above 1023) with --port`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new HttpListenError(`cannot listen on ${settings.host}: it is not an address of this machine; choose one with --host`);
    default:
      return err;
  }
}

export interface Refusal {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

/**
 * Who may use the agent key through this port. Bound to loopback, only loopback Host headers pass: a web
 * page's DNS-rebinding trick arrives with its own host name. A browser names the page that sent a request in
 * Origin: only this server's own origin and loopback pages pass, so no other site's page can use the key (MCP
 * Streamable HTTP: servers must validate Origin). Clients that are not browsers send none. With a token, the
 * Authorization header must carry it.
 */
export function refuseRequest(req: IncomingMessage, settings: HttpSettings): Refusal | null {
  if (isLoopback(settings.host)) {
    const hostname = hostnameOf(req.headers.host);
    if (hostname === null || !isLoopback(hostname))
      return { status: 403, message: `Host ${JSON.stringify(req.headers.host ?? '')} is not allowed` };
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !allowedOrigin(origin, req.headers.host))
    return { status: 403, message: `Origin ${JSON.stringify(origin)} is not allowed` };
  // The scheme's letter case is free (RFC 9110 §11.1), as on every other port of the service.
  if (settings.token !== undefined && !sameSecret(bearerToken(req.headers.authorization) ?? '', settings.token)) {
    return { status: 401, message: 'Authorization: Bearer <FLAGOPS_MCP_TOKEN> is required', headers: { 'www-authenticate': 'Bearer' } };
  }
  return null;
}

/** This server's own origin (the host the request was sent to, by http or https through a proxy), or a loopback page. */
function allowedOrigin(origin: string, host: string | undefined): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // `null` (a sandboxed or file page) included
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return isLoopback(url.hostname) || (host !== undefined && url.host === hostOf(host));
}

/** A Host header as URL.host spells it (lower case, default port dropped), to compare with an origin's. */
function hostOf(host: string): string | null {
  try {
    return new URL(`http://${host}`).host;
  } catch {
    return null;
  }
}

function hostnameOf(host: string | undefined): string | null {
  if (!host) return null;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
