import http, { type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { CLIENT_CLOSED_REQUEST, type ErrorCode, RequestCutOffError } from '../errors/kinds.js';

/** The status answered on each connection closed here, for the request its closing cuts off to be counted with. */
const answeredBeforeClosing = new WeakMap<Duplex, number>();

/**
 * What Node's HTTP parser refuses before any handler runs (headers too large, bytes that are not HTTP, a
 * request not received in time). Node answers these with a bare status line; this answers them with the
 * `{ error: { code, message } }` body every other error has, then closes the connection, as Node does.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // The client reset or closed the connection mid-request (HPE_INVALID_EOF_STATE): it reads no answer, and the
  // request it cut off is counted as the client's (499), not as one refused here.
  if (err.code === 'ECONNRESET' || err.code === 'HPE_INVALID_EOF_STATE' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, code, message } = describe(err.code);
  answeredBeforeClosing.set(socket, status);
  const body = JSON.stringify({ error: { code, message } });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'X-Content-Type-Options: nosniff\r\n' +
      'Connection: close\r\n\r\n' +
      body,
  );
  // A client that never closes its side (one dripping headers, say) would keep the socket, and its file, for good.
  const lingering = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
  lingering.unref();
  socket.once('close', () => clearTimeout(lingering));
}

/**
 * What a request whose body stopped coming (its connection closed) is counted as: the status answered here before
 * closing its connection (408 for a body not received in time), else 499, the client gone.
 */
export function requestCutOff(req: IncomingMessage): RequestCutOffError {
  return new RequestCutOffError(answeredBeforeClosing.get(req.socket) ?? CLIENT_CLOSED_REQUEST);
}

/** How long the error answer has to reach a client before its connection is closed from this side. */
const CLOSE_GRACE_MS = 2_000;

function describe(parserCode: string | undefined): { status: number; code: ErrorCode; message: string } {
  switch (parserCode) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        code: 'invalid_input',
        message: `the request line and headers are larger than ${Math.round(http.maxHeaderSize / 1024)} KiB in all; shorten the query string or the headers`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADER_TIMEOUT':
      return { status: 408, code: 'invalid_input', message: 'the request was not received in time; send it again' };
    default:
      return { status: 400, code: 'invalid_input', message: 'not a valid HTTP request' };
  }
}
