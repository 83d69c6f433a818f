import type { ErrorCode } from '../../foundations/errors/kinds.js';
import { oneLine } from '../../foundations/validation/one-line.js';

/** What a client is told when git exited without answering anything: an error, never an empty 200. */
export interface UnansweredFailure {
  status: number;
  code: ErrorCode;
  message: string;
}

/** git's own words when the request body is not its protocol (pkt-lines): `fatal: protocol error: bad line length character: …`. */
const PROTOCOL_ERROR = /^fatal: (protocol error: [^\n]*)/m;
/** git quotes the bytes it could not read: enough of its line to say what was wrong. */
const REASON_LIMIT = 120;

/**
 * Why git answered nothing, from its stderr: a body git could not read as its protocol is the client's
 * mistake (400, with git's reason, its unreadable bytes made printable); anything else is the server's (502),
 * logged with git's stderr, which may name paths of the server and is not the client's to read.
 */
export function unansweredFailure(stderr: string): UnansweredFailure {
  const protocolError = PROTOCOL_ERROR.exec(stderr)?.[1];
  if (protocolError === undefined) {
    return { status: 502, code: 'internal', message: 'git ended without answering; try again, and tell the operator if it persists' };
  }
  const reason = oneLine(protocolError.replace(/[^\x20-\x7e]/g, '?')).slice(0, REASON_LIMIT);
  return { status: 400, code: 'invalid_input', message: `the request body is not one git can read: ${reason}` };
}
