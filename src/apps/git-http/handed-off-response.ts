import { STATUS_CODES } from 'node:http';
import type net from 'node:net';
import type { ErrorBody } from '../../foundations/errors/http-status.js';
import { type CgiHead, cgiHeadEnd, parseCgiHead } from './cgi-head.js';
import type { HandOffMessage, HandOffReport } from './runner-protocol.js';
import { spawnGit, stopGit } from './spawn-git.js';
import { type UnansweredFailure, unansweredFailure } from './unanswered-failure.js';

/** What is kept of git's stderr for the log: enough to see why it failed, never unbounded. */
export const STDERR_LIMIT = 16 * 1024;
/** How long a connection stays open once its answer is written, for the client to close it first. */
const LINGER_MS = 5_000;
/** Headers the runner decides itself: how the body is framed and that the connection ends with it. */
const FRAMING = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);

const COULD_NOT_START: UnansweredFailure = {
  status: 500,
  code: 'internal',
  message: 'git could not be started on the server; try again, and tell the operator if it persists',
};

/** The status line and headers of a handed-off answer: chunked, and the connection closes after it. */
export function responseHead(status: number, ...headerLists: Array<Array<[string, string]>>): string {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}`, `Date: ${new Date().toUTCString()}`];
  for (const headers of headerLists) {
    for (const [name, value] of headers) {
      if (FRAMING.has(name.toLowerCase()) || /[\r\n]/.test(name) || /[\r\n]/.test(value)) continue;
      lines.push(`${name}: ${value}`);
    }
  }
  lines.push('Connection: close', 'Transfer-Encoding: chunked');
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * Answers one handed-off request (runner-protocol.ts) in the git runner: runs git with the request's body
 * as input, turns git's CGI head into the HTTP head, and writes the rest to the client's socket as it comes,
 * at the client's pace (git waits while the client is slow). A client that goes away stops git and what it
 * started. `done` is called once, when git has exited and its answer is written (or the connection closed:
 * the client may close it after reading, or it is closed a few seconds later). Returns a function that
 * ends the request now (git stopped, connection closed): the service is stopping and its grace period is over.
 */
export function answerHandedOff(socket: net.Socket, request: HandOffMessage, done: (report: HandOffReport) => void): () => void {
  let head: Buffer | null = Buffer.alloc(0);
  /** git's CGI head, held until its body begins: a git that fails before answering anything gets an error status. */
  let heldHead: CgiHead | null = null;
  let status = 0;
  let bytes = 0;
  let stderr = '';
  let exit: { code: number | null; signal: string | null; error?: string } | null = null;
  /** The connection closed, or the whole answer was handed to the kernel: nothing more to do for it. */
  let over = false;
  let clientGone = false;
  let reported = false;

  const git = spawnGit(request.args, request.env, false);
  const report = () => {
    if (reported || exit === null || !over) return;
    reported = true;
    const { code, signal, error } = exit;
    done({ type: 'served', id: request.id, status, code, signal, bytes, stderr: stderr.trim(), clientGone, ...(error ? { error } : {}) });
  };

  // Nothing more is expected from the client; reading notices when it goes away while git is still busy.
  socket.on('error', () => {});
  socket.resume();
  socket.once('finish', () => {
    over = true;
    report();
  });
  socket.on('close', () => {
    over = true;
    if (exit === null) {
      clientGone = true;
      stopGit(git);
    }
    report();
  });

  let waiting = false;
  const send = (...parts: Array<string | Buffer>) => {
    if (!socket.writable) return;
    let flowing = true;
    socket.cork(); // one write for a chunk and its framing
    for (const part of parts) flowing = socket.write(part);
    socket.uncork();
    if (flowing || waiting) return;
    waiting = true;
    git.stdout.pause();
    socket.once('drain', () => {
      waiting = false;
      git.stdout.resume();
    });
  };
  const sendBody = (chunk: Buffer) => {
    if (chunk.length === 0) return;
    if (heldHead !== null) {
      status = heldHead.status;
      send(responseHead(status, request.headers, heldHead.headers));
      heldHead = null;
    }
    bytes += chunk.length;
    send(`${chunk.length.toString(16)}\r\n`, chunk, '\r\n');
  };
  const end = (failure: UnansweredFailure | null) => {
    const unanswered = head !== null || heldHead !== null;
    const held = heldHead;
    head = null;
    heldHead = null;
    if (unanswered && !clientGone) {
      if (held !== null && failure === null) {
        status = held.status;
        send(responseHead(status, request.headers, held.headers));
      } else {
        // git ended (or never started) before answering anything: say why rather than send an empty answer.
        const why = failure ?? unansweredFailure(stderr);
        status = why.status;
        send(responseHead(status, request.headers, [['Content-Type', 'application/json; charset=utf-8']]));
        sendBody(Buffer.from(JSON.stringify({ error: { code: why.code, message: why.message } } satisfies ErrorBody)));
      }
    }
    if (socket.writable) socket.end('0\r\n\r\n');
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
    report();
  };

  git.stdin.on('error', () => {}); // git may answer (e.g. 403) before reading the whole body
  git.stdin.end(Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength));
  git.stdout.on('data', (chunk: Buffer) => {
    if (head === null) return sendBody(chunk);
    head = Buffer.concat([head, chunk]);
    const at = cgiHeadEnd(head);
    if (at < 0) return;
    heldHead = parseCgiHead(head.subarray(0, at).toString('latin1'));
    const body = head.subarray(at);
    head = null;
    sendBody(body);
  });
  git.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < STDERR_LIMIT) stderr += chunk.toString('utf8', 0, Math.min(chunk.length, STDERR_LIMIT - stderr.length));
  });
  git.on('error', (err) => {
    if (exit !== null) return;
    exit = { code: null, signal: null, error: err.message };
    end(COULD_NOT_START);
  });
  git.on('close', (code, signal) => {
    if (exit !== null) return;
    exit = { code, signal };
    end(code === 0 ? null : unansweredFailure(stderr));
  });

  return () => {
    stopGit(git);
    socket.destroy();
  };
}
