import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { Logger } from '../log/logger.js';

/** Which server a port is: its cap's share, the `server` label of the refused-connections metric. */
export type PortName = 'control' | 'evaluation' | 'replica';

/**
 * Each port's share of the process's open-file limit. The evaluation port (or a replica's only port) takes
 * 60 %, the control port 20 %; the last 20 % stays for what the service itself opens (repository files, caches,
 * git processes' pipes, PostgreSQL). A flood of connections on one port then cannot starve the files the
 * service reads nor the other port, so the control port's kill switch answers while the evaluation port is full.
 */
const SHARE: Record<PortName, number> = { evaluation: 0.6, replica: 0.6, control: 0.2 };

/** Assumed when the limit cannot be read (not Linux): the usual soft limit, so the caps err on the low side. */
const ASSUMED_OPEN_FILES = 1024;
/** `unlimited` cannot hold for open files on Linux; Linux's own ceiling (fs.nr_open) stands in for it. */
const UNLIMITED_OPEN_FILES = 1_048_576;

/**
 * How long a connection may take to send a request's line and headers, from its first byte (or from being
 * opened): a connection that sends nothing, or drips a header line now and then, is answered 408 and closed
 * after this. Headers fit in a packet; 10 s is ample for a slow network.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
/**
 * How long a whole request may take to arrive, body included (Node's default): a push over /git of a large
 * pack on a slow link. A streamed answer (SSE) is not bounded: the request is whole once its headers are in.
 */
const REQUEST_TIMEOUT_MS = 300_000;
/** How often the two timeouts above are checked: a connection is closed at most this much past them. */
const TIMEOUT_CHECK_MS = 1_000;
/**
 * Idle keep-alive connections are closed after 65 s: longer than the 60 s load balancers (AWS, nginx) keep an
 * idle connection to a server, so that they never send a request on a connection the server is closing.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** An HTTP server with the timeouts above: every server of the service is made by this. */
export function createTimedServer(handler: http.RequestListener): http.Server {
  const server = http.createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_MS },
    handler,
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  return server;
}

/** The process's soft limit on open files (RLIMIT_NOFILE), as Node left it at start (it raises it to the hard limit). */
export function openFileLimit(limitsFile = '/proc/self/limits'): number {
  let text: string;
  try {
    text = readFileSync(limitsFile, 'utf8');
  } catch {
    return ASSUMED_OPEN_FILES;
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  if (soft === 'unlimited') return UNLIMITED_OPEN_FILES;
  const limit = Number(soft);
  return Number.isSafeInteger(limit) && limit > 0 ? limit : ASSUMED_OPEN_FILES;
}

/** The most connections `port` holds open at once, out of `openFiles`. */
export function connectionCap(port: PortName, openFiles = openFileLimit()): number {
  return Math.max(1, Math.floor(openFiles * SHARE[port]));
}

/** How long one warning covers the connections refused after it: a flood is said once a minute, not per connection. */
const REFUSALS_REPORTED_EVERY_MS = 60_000;

const refusedByPort: Record<PortName, number> = { control: 0, evaluation: 0, replica: 0 };

/** Connections refused at a port's cap since the process started, per port (`flagops_connections_refused_total`). */
export function refusedConnectionCounts(): Readonly<Record<PortName, number>> {
  return refusedByPort;
}

/**
 * Caps the connections `server` holds open at its share of the open-file limit. Node closes a connection past
 * the cap as soon as it is accepted; each is counted, and logged once for a minute's worth of them.
 */
export function capConnections(server: http.Server, port: PortName, logger: Logger, openFiles = openFileLimit()): void {
  const cap = connectionCap(port, openFiles);
  server.maxConnections = cap;
  let reporting: { refused: number } | undefined;
  const report = () => {
    if (reporting!.refused === 0) {
      reporting = undefined;
      return;
    }
    logger.warn('connections are still being refused: the port holds as many as it may', {
      server: port,
      maxConnections: cap,
      refused: reporting!.refused,
      seconds: REFUSALS_REPORTED_EVERY_MS / 1000,
    });
    reporting!.refused = 0;
    setTimeout(report, REFUSALS_REPORTED_EVERY_MS).unref();
  };
  server.on('drop', () => {
    refusedByPort[port] += 1;
    if (reporting) {
      reporting.refused += 1;
      return;
    }
    logger.warn('a connection was refused: the port holds as many as it may; more are refused until some close', {
      server: port,
      maxConnections: cap,
      openFiles,
    });
    reporting = { refused: 0 };
    setTimeout(report, REFUSALS_REPORTED_EVERY_MS).unref();
  });
}
