/**
 * The wire between the service and its git runner (git-runner.ts, git-runner-process.ts), over one Unix
 * socket connection per git process. The service sends one JSON line, `{ args, env }`, then git's standard
 * input as raw bytes, and half-closes when that input ends. The runner answers with frames: one type byte,
 * a 32-bit big-endian length, the payload: git's stdout and stderr as they come, and last its exit status.
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
