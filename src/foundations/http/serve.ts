import type http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { toHttpError } from '../errors/http-status.js';
import { FlagopsError } from '../errors/kinds.js';
import type { Logger } from '../log/logger.js';
import { answerClientError } from './client-errors.js';
import { capConnections, createTimedServer, type PortName } from './connection-limits.js';

export interface RunningServer {
  server: http.Server;
  port: number;
  url: string;
  /**
   * Stops at once: no new connection is accepted, idle keep-alive connections are closed, and a request arriving
   * on a connection still open is answered 503 `unavailable` with `Connection: close`. Requests already being
   * handled finish and are answered (with `Connection: close`), for up to `drainMs`; whatever is still unanswered
   * then is cut off. Long-lived answers (streams) are for their owners to end first. Resolves once every
   * connection is closed, those sent to a child process (git over HTTP's clones) included: Node asks the child
   * until they close.
   */
  close(drainMs?: number): Promise<void>;
}

/**
 * How long a stop waits for the requests in flight by default: reads and evaluations take milliseconds. The
 * service passes a longer one, covering a write's own deadlines.
 */
const DRAIN_MS = 10_000;
/** How often a stop looks whether the requests in flight are answered, closing the connections they leave idle. */
const DRAIN_CHECK_MS = 50;

/**
 * For each request in flight, how it leaves the set a stop waits on: see answeredElsewhere().
 */
const releases = new WeakMap<ServerResponse, () => void>();

/**
 * The request's connection went to another process, which has answered it (git over HTTP's clones, written by
 * the git runner): it is no longer in flight here. Node neither closes the response nor its socket in this
 * process then (the socket was sent, not closed), so without this a stop would wait its whole drain for it and
 * say it was cut off, and the set of requests in flight would keep it for as long as the server runs.
 */
export function answeredElsewhere(res: ServerResponse): void {
  releases.get(res)?.();
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
  // The requests being handled, for a stop to wait for: each leaves when its answer is sent or its connection closes.
  const inFlight = new Set<ServerResponse>();
  let stopping = false;
  const server = createTimedServer((req, res) => {
    // Every answer of every server, errors and 304s included: no browser may sniff JSON (or a flag value in
    // it) into HTML or script.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (stopping) {
      answerStopping(res);
      return;
    }
    inFlight.add(res);
    const release = () => inFlight.delete(res);
    res.on('close', release);
    releases.set(res, release);
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
  let closing: Promise<void> | undefined;
  return {
    server,
    port: actual,
    url: `http://${urlHost}:${actual}`,
    close: (drainMs = DRAIN_MS) => {
      if (!closing) {
        stopping = true;
        closing = drain(server, inFlight, drainMs, identity?.logger);
      }
      return closing;
    },
  };
}

/**
 * The stop of `server` once nothing new is taken: a client gets the answer to every request it sent before the
 * stop (a committed write included), and none is taken that the stop would then cut off.
 */
async function drain(server: http.Server, inFlight: Set<ServerResponse>, drainMs: number, logger: Logger | undefined): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // The client is told its connection ends with this answer, so it sends nothing more on it.
  for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
  const deadline = Date.now() + drainMs;
  while (answering(inFlight) > 0 && Date.now() < deadline) {
    // A connection whose answer was sent before the stop told it to close (a stream's) is idle now.
    server.closeIdleConnections();
    await new Promise((resolve) => setTimeout(resolve, DRAIN_CHECK_MS));
  }
  const unanswered = answering(inFlight);
  if (unanswered > 0) {
    logger?.warn('stopping without answering requests still in flight', { requests: unanswered, drainSeconds: drainMs / 1000 });
  }
  // What is left has no request being handled (idle, or still sending one's headers), or is past the drain.
  server.closeAllConnections();
  await closed;
}

/**
 * How many requests in flight still wait for their answer. An answer queued behind another on its connection
 * (pipelined) is never sent once that connection closes, and says nothing of it: it is dropped here.
 */
function answering(inFlight: Set<ServerResponse>): number {
  for (const res of inFlight) if (res.req.socket?.destroyed) inFlight.delete(res);
  return inFlight.size;
}

/** A request that arrives on a kept-alive connection once the stop began: refused, and the connection closed after. */
function answerStopping(res: ServerResponse): void {
  const { status, body, headers } = toHttpError(
    new FlagopsError('unavailable', 'the service is stopping; send the request again', { retryAfterSeconds: 1 }),
  );
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    Connection: 'close',
  });
  res.end(text);
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
