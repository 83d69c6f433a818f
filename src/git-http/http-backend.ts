import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log/logger.js';
import { type GitRunner, runGitDirectly } from './git-runner.js';

export interface BackendRequest {
  /** The directory holding the bare repositories (`<dataDir>/repos`). */
  projectRoot: string;
  /** The path inside it: `/acme.git/info/refs`. */
  pathInfo: string;
  remoteUser: string;
  /** Allow git-receive-pack (push). */
  allowPush: boolean;
  /** Extra environment for git and its hooks. */
  env?: Record<string, string>;
  logger: Logger;
  /** Where git runs (git-runner.ts); without one, from this process. */
  runner?: GitRunner;
  /** Runs after git has finished and before the response ends: the client's command returns after it. */
  beforeEnd?: () => Promise<void>;
}

/** What is kept of git's stderr for the log: enough to see why it failed, never unbounded. */
const STDERR_LIMIT = 16 * 1024;

/** One pack thread: a clone takes the CPU the evaluation server leaves idle, not the other way round. */
const GIT_SETTINGS = ['-c', 'pack.threads=1'];

/**
 * Runs `git http-backend` (git's own smart-HTTP server, as a CGI program) for one request: the request body
 * streams into it, its CGI head becomes the HTTP status and headers, and the rest streams out, as fast as the
 * client reads it (git waits while the client is slow, so a slow clone never piles up in memory). git
 * inflates a gzip-encoded body itself when told the encoding (it sends `Content-Encoding: gzip` for large posts).
 */
export function runHttpBackend(req: IncomingMessage, res: ServerResponse, request: BackendRequest): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    GIT_PROJECT_ROOT: request.projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    GIT_CONFIG_NOSYSTEM: '1',
    PATH_INFO: request.pathInfo,
    REQUEST_METHOD: req.method ?? 'GET',
    QUERY_STRING: url.search.slice(1),
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    REMOTE_USER: request.remoteUser,
    REMOTE_ADDR: req.socket.remoteAddress ?? '',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: 'HTTP/1.1',
    ...request.env,
  };
  if (req.headers['content-length'] !== undefined) env.CONTENT_LENGTH = req.headers['content-length'];
  if (req.headers['content-encoding'] !== undefined) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
  if (req.headers['git-protocol'] !== undefined) env.GIT_PROTOCOL = String(req.headers['git-protocol']);
  const args = [...GIT_SETTINGS, '-c', `http.receivepack=${request.allowPush}`, 'http-backend'];

  // The client went away while the request waited for its turn: nobody would read git's answer.
  if (res.destroyed || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const child = request.runner ? request.runner.run(args, env) : runGitDirectly(args, env);
    let head: Buffer | null = Buffer.alloc(0);
    let stderr = '';
    req.pipe(child.stdin);
    child.stdin.on('error', () => {}); // git may answer (e.g. 403) before reading the whole body
    // A client that goes away ends git too, rather than leaving it to pack for nobody or wait for more input.
    res.once('close', () => {
      if (res.writableFinished) return;
      req.unpipe(child.stdin);
      child.stop();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_LIMIT) stderr += chunk.toString('utf8', 0, Math.min(chunk.length, STDERR_LIMIT - stderr.length));
    });
    const write = (chunk: Buffer) => {
      if (chunk.length === 0 || res.writableEnded) return;
      if (!res.write(chunk)) {
        child.stdout.pause();
        res.once('drain', () => child.stdout.resume());
      }
    };
    child.stdout.on('data', (chunk: Buffer) => {
      if (head === null) return write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = cgiHeadEnd(head);
      if (end < 0) return;
      const { status, headers } = parseCgiHead(head.subarray(0, end).toString('latin1'));
      res.statusCode = status;
      for (const [name, value] of headers) res.appendHeader(name, value);
      const body = head.subarray(end);
      head = null;
      write(body);
    });
    child.on('error', (err: Error) => {
      request.logger.error('git http-backend could not start', { err });
      if (!res.headersSent) res.statusCode = 500;
      res.end();
      resolve();
    });
    child.on('close', async (code: number | null, signal: string | null) => {
      if (code !== 0 && !res.destroyed)
        request.logger.warn('git http-backend failed', { code, signal, path: request.pathInfo, stderr: stderr.trim() });
      if (head !== null && !res.headersSent) res.statusCode = 502; // it ended before a complete head
      try {
        await request.beforeEnd?.();
      } catch (err) {
        request.logger.error('finishing a git request failed', { err });
      }
      res.end();
      resolve();
    });
  });
}

/** The head of a CGI response (RFC 3875 §6): header lines up to a blank line; `Status:` sets the HTTP status. */
export interface CgiHead {
  status: number;
  headers: Array<[string, string]>;
}

/** Finds the end of the CGI head in `buffer`: the index where the body starts, or -1 when not there yet. */
export function cgiHeadEnd(buffer: Buffer): number {
  const crlf = buffer.indexOf('\r\n\r\n');
  const lf = buffer.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return crlf + 4;
  return lf >= 0 ? lf + 2 : -1;
}

export function parseCgiHead(text: string): CgiHead {
  let status = 200;
  const headers: Array<[string, string]> = [];
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else headers.push([name, value]);
  }
  return { status, headers };
}
