/**
 * The wires between the service and its git runner (git-runner.ts, git-runner-process.ts). Requests whose
 * answer streams through the service use one Unix socket connection per git process: the service sends one
 * JSON line, `{ args, env }`, then git's standard input as raw bytes, and half-closes when that input ends.
 * The runner answers with frames: one type byte, a 32-bit big-endian length, the payload: git's stdout and
 * stderr as they come, and last its exit status. Clones and fetches go over the runner's Node IPC channel
 * instead, the client's connection sent along (HandOffMessage below).
 */

export interface RunRequest {
  args: string[];
  env: Record<string, string>;
}

export interface ExitStatus {
  code: number | null;
  signal: string | null;
  /** Set when git could not be started at all. */
  error?: string;
}

export const FRAME_STDOUT = 1;
export const FRAME_STDERR = 2;
export const FRAME_EXIT = 3;

/** A request line longer than this is not one (the environment of a git request is a few KiB). */
export const MAX_REQUEST_LINE = 256 * 1024;

export function encodeFrame(type: number, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const head = Buffer.allocUnsafe(5);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** Cuts a byte stream back into frames, whatever the chunk boundaries. */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly onFrame: (type: number, payload: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 5) {
      const length = this.pending.readUInt32BE(1);
      if (this.pending.length < 5 + length) return;
      const type = this.pending.readUInt8(0);
      const payload = this.pending.subarray(5, 5 + length);
      this.pending = this.pending.subarray(5 + length);
      this.onFrame(type, payload);
    }
  }
}

/**
 * A clone or fetch whose connection the service hands to the runner, over the runner's Node IPC channel,
 * the client's socket sent along with it: the runner runs git and writes the whole HTTP response to that
 * socket itself, so the pack data never passes through the service. The service has read the request
 * (headers and body) already; the runner only answers.
 */
export interface HandOffMessage {
  type: 'serve';
  id: number;
  args: string[];
  env: Record<string, string>;
  /** The request body as the client sent it (git inflates a gzip-encoded one itself: HTTP_CONTENT_ENCODING). */
  body: Uint8Array;
  /** Headers the service puts on every response; the runner adds git's own, `Connection: close` and chunked encoding. */
  headers: Array<[string, string]>;
}

/** The service is stopping: answers still being written get `graceMs` more, then git is stopped and the connection closed. */
export interface StopMessage {
  type: 'stop';
  graceMs: number;
}

/** The runner's report once a handed-off request is over: git exited, and its answer is written or the connection closed. */
export interface HandOffReport {
  type: 'served';
  id: number;
  /** The HTTP status written, 0 when none was (the client went away first). */
  status: number;
  code: number | null;
  signal: string | null;
  /** Bytes of git's answer written to the client (the response body, before chunked framing). */
  bytes: number;
  /** The start of git's stderr, for the log. */
  stderr: string;
  /** The client closed the connection before the answer was whole (git was stopped, if it still ran). */
  clientGone: boolean;
  /** Set when git could not be started, or the request arrived without its connection. */
  error?: string;
}
