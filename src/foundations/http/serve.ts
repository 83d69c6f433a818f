import type http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Logger } from '../log/logger.js';
import { answerClientError } from './client-errors.js';
import { capConnections, createTimedServer, type PortName } from './connection-limits.js';

export interface RunningServer {
  server: http.Server;
  port: number;
  url: string;
  /**
   * Stops accepting, lets requests in flight finish, then closes idle keep-alive sockets. Connections sent
   * to a child process (git over HTTP's clones) are waited for too: Node asks the child until they close.
   */
  close(): Promise<void>;
}

/** Answers a request itself (true) or leaves it to the app (false), before Koa sees it. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Which server listens, for its share of the open connections, and where to say that its cap is reached. */
export interface ServerIdentity {
  name: PortName;
  logger: Logger;
}

/**
 * Listens on host:port (0 = a free port) and resolves once listening, with the timeouts of connection-limits.ts;
 * with `identity` (every port of the service and of a replica), its open connections are capped as well.
 */
export async function listen(app: Koa, host: string, port: number, fastPath?: FastPath, identity?: ServerIdentity): Promise<RunningServer> {
  loadFetchGlobals();
  const callback = app.callback();
  const server = createTimedServer((req, res) => {
    // Every answer of every server, errors and 304s included: no browser may sniff JSON (or a flag value in
    // it) into HTML or script.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (!fastPath?.(req, res)) callback(req, res);
  });
  server.on('clientError', answerClientError);
  if (identity) capConnections(server, identity.name, identity.logger);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    server,
    port: actual,
    url: `http://${urlHost}:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Long-lived streams (SSE) never become idle; give in-flight requests a moment, then end them.
        setTimeout(() => server.closeAllConnections(), 2_000).unref();
      }),
  };
}

/**
 * Koa's body setter compares every object body with the global `Response`, and Node loads its fetch
 * implementation on the first touch of that global: 20 ms of compiling on an idle machine, 90 ms on a busy
 * one, on the event loop. Touched before listening, so that the first JSON answer does not stall every request
 * in flight, evaluations included (it showed as the slowest evaluations while the first clone was answered 401).
 */
function loadFetchGlobals(): void {
  if (typeof globalThis.Response !== 'function') throw new Error('this Node has no fetch (Node 20 or later is needed)');
}
