import type { IncomingMessage, ServerResponse } from 'node:http';
import type net from 'node:net';
import { TLSSocket } from 'node:tls';
import type { ErrorBody } from '../../foundations/errors/http-status.js';
import type { ErrorCode } from '../../foundations/errors/kinds.js';
import { answeredElsewhere } from '../../foundations/http/serve.js';
import type { Logger } from '../../foundations/log/logger.js';
import { type CgiHead, cgiHeadEnd, parseCgiHead } from './cgi-head.js';
import { type GitRunner, runGitDirectly } from './git-runner.js';
import { STDERR_LIMIT } from './handed-off-response.js';
import { unansweredFailure } from './unanswered-failure.js';

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
  /** The request body, already read by the caller; without it, the body streams from `req` into git. */
  body?: Buffer;
}

/** One pack thread: a clone takes the CPU the evaluation server leaves idle, not the other way round. */
const GIT_SETTINGS = ['-c', 'pack.threads=1'];

/** The CGI environment of `git http-backend` for one request. */
function backendEnv(req: IncomingMessage, request: BackendRequest): Record<string, string> {
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
  // A body read whole has a length even when it came chunked (git sends large posts so).
  if (request.body) env.CONTENT_LENGTH = String(request.body.length);
  else if (req.headers['content-length'] !== undefined) env.CONTENT_LENGTH = req.headers['content-length'];
  if (req.headers['content-encoding'] !== undefined) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
  if (req.headers['git-protocol'] !== undefined) env.GIT_PROTOCOL = String(req.headers['git-protocol']);
  return env;
}

const backendArgs = (request: BackendRequest) => [...GIT_SETTINGS, '-c', `http.receivepack=${request.allowPush}`, 'http-backend'];

/** What Node keeps on an HTTP server's socket, read to tell whether the connection can be handed over whole. */
type ServerSocket = net.Socket & { _handle?: object | null; _httpMessage?: unknown; parser?: { incoming?: unknown } | null };

/**
 * Why the client's connection cannot be handed to the git runner as it is, or null when it can: only a
 * plain TCP or Unix socket whose one request has been read to its end and whose answer has not begun, with
 * nothing Node read past it (a pipelined request behind it) and nothing waiting to be written.
 */
export function handOffProblem(req: IncomingMessage, res: ServerResponse): string | null {
  const socket = req.socket as ServerSocket;
  if (socket instanceof TLSSocket) return 'an encrypted connection';
  if (req.httpVersion !== '1.1') return `HTTP/${req.httpVersion}`;
  if (!req.complete) return 'the request body is not read';
  if (socket.destroyed || !socket._handle) return 'the connection is closed';
  const kind = socket._handle.constructor.name;
  if (kind !== 'TCP' && kind !== 'Pipe') return `a ${kind} connection`;
  if (res.headersSent || socket._httpMessage !== res) return 'another answer is being written on the connection';
  if (socket.parser?.incoming !== req) return 'Node has read a request behind this one';
  if (socket.readableLength > 0 || socket.writableLength > 0) return 'bytes are buffered on the connection';
  return null;
}

/**
 * Answers a git-upload-pack request (a clone or fetch, whose answer is the pack: the big one) whose body
 * the caller has read (`request.body`). The client's connection is handed to the git runner, which runs git
 * and writes the response to it itself (git-runner.ts), so the pack never passes through this process; the
 * response ends with the connection (`Connection: close`). Where the connection cannot be handed over (no
 * runner, handOffProblem), the answer streams through this process as for every other git request.
 * Resolves once the request is over, with `res.statusCode` the status sent.
 */
export async function serveUploadPack(
  req: IncomingMessage,
  res: ServerResponse,
  request: BackendRequest & { body: Buffer },
): Promise<void> {
  const runner = request.runner;
  if (!runner || !(await runner.helperRunning()) || handOffProblem(req, res) !== null) return runHttpBackend(req, res, request);
  const headers = Object.entries(res.getHeaders()).flatMap(
    ([name, value]): Array<[string, string]> =>
      value === undefined ? [] : Array.isArray(value) ? value.map((v) => [name, v]) : [[name, String(value)]],
  );
  const handedOff = runner.handOff(req.socket, { args: backendArgs(request), env: backendEnv(req, request), body: request.body, headers });
  if (!handedOff) return runHttpBackend(req, res, request);
  const outcome = await handedOff;
  answeredElsewhere(res);
  if (outcome.status > 0) res.statusCode = outcome.status;
  else if (!outcome.clientGone) res.statusCode = 500;
  if (outcome.error !== undefined || (outcome.code !== 0 && !outcome.clientGone)) {
    const { code, signal, stderr, error } = outcome;
    request.logger.warn('git http-backend failed', { code, signal, path: request.pathInfo, stderr, ...(error ? { error } : {}) });
  }
}

/**
 * Runs `git http-backend` (git's own smart-HTTP server, as a CGI program) for one request: the request body
 * streams into it, its CGI head becomes the HTTP status and headers, and the rest streams out, as fast as the
 * client reads it (git waits while the client is slow, so a slow clone never piles up in memory). git
 * inflates a gzip-encoded body itself when told the encoding (it sends `Content-Encoding: gzip` for large posts).
 */
export function runHttpBackend(req: IncomingMessage, res: ServerResponse, request: BackendRequest): Promise<void> {
  const env = backendEnv(req, request);
  const args = backendArgs(request);

  // The client went away while the request waited for its turn: nobody would read git's answer.
  if (res.destroyed || (req.destroyed && !req.complete)) return Promise.resolve();
  return new Promise((resolve) => {
    const child = request.runner ? request.runner.run(args, env) : runGitDirectly(args, env);
    let head: Buffer | null = Buffer.alloc(0);
    /** git's CGI head, held until its body begins: a git that fails before answering anything gets an error status. */
    let heldHead: CgiHead | null = null;
    let stderr = '';
    if (request.body) child.stdin.end(request.body);
    else req.pipe(child.stdin);
    child.stdin.on('error', () => {}); // git may answer (e.g. 403) before reading the whole body
    // A client that goes away ends git too, rather than leaving it to pack for nobody or wait for more input.
    res.once('close', () => {
      if (res.writableFinished) return;
      req.unpipe(child.stdin);
      child.stop();
    });
    // git has exited: what it did not read of the body is read and dropped, as Node does for any body a
    // handler leaves, so that the client, still sending, gets to read the answer.
    const dropUnreadBody = () => {
      req.unpipe(child.stdin);
      if (!req.complete) req.resume();
    };
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_LIMIT) stderr += chunk.toString('utf8', 0, Math.min(chunk.length, STDERR_LIMIT - stderr.length));
    });
    const write = (chunk: Buffer) => {
      if (chunk.length === 0 || res.writableEnded) return;
      if (heldHead !== null) {
        sendHead(res, heldHead);
        heldHead = null;
      }
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
      heldHead = parseCgiHead(head.subarray(0, end).toString('latin1'));
      const body = head.subarray(end);
      head = null;
      write(body);
    });
    child.on('error', (err: Error) => {
      dropUnreadBody();
      request.logger.error('git http-backend could not start', { err });
      endWithError(res, 500, 'internal', 'git could not be started on the server; try again, and tell the operator if it persists');
      resolve();
    });
    child.on('close', async (code: number | null, signal: string | null) => {
      dropUnreadBody();
      if (code !== 0 && !res.destroyed)
        request.logger.warn('git http-backend failed', { code, signal, path: request.pathInfo, stderr: stderr.trim() });
      try {
        await request.beforeEnd?.();
      } catch (err) {
        request.logger.error('finishing a git request failed', { err });
      }
      if (heldHead !== null && code === 0) sendHead(res, heldHead);
      // It ended before answering anything: say why rather than send an empty answer.
      if (head !== null || (heldHead !== null && code !== 0)) {
        const failure = unansweredFailure(stderr);
        endWithError(res, failure.status, failure.code, failure.message);
      } else res.end();
      resolve();
    });
  });
}

/** git's CGI head as the response's status and headers, which go out with the first bytes of its body. */
function sendHead(res: ServerResponse, head: CgiHead): void {
  if (res.headersSent) return;
  res.statusCode = head.status;
  for (const [name, value] of head.headers) res.appendHeader(name, value);
}

/** Ends an answer that has not begun with the `{ error }` body every other error has (a begun one just ends). */
function endWithError(res: ServerResponse, status: number, code: ErrorCode, message: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify({ error: { code, message } } satisfies ErrorBody);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
