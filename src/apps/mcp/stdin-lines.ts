import { type Readable, Transform } from 'node:stream';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';

/** The longest line of stdin read as a message: the SDK's stdio reader ends the session past this much buffered. */
export const MAX_STDIN_MESSAGE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;

/**
 * `input` as whole lines only, each line longer than `maxBytes` (its newline included) left out and `onDropped`
 * told its length once it ends. The SDK's reader, given such a line, closed the session without a word; without
 * it, the client is answered and the messages after it are read as before. A line is held here until its newline,
 * so a line dropped part-way never leaves its start in the reader to spoil the next message.
 */
export function withoutOverlongLines(input: Readable, maxBytes: number, onDropped: (bytes: number) => void): Transform {
  let held: Buffer[] = [];
  let heldBytes = 0;
  /** Bytes of the line being left out so far; -1 when none is. */
  let dropping = -1;
  const lines = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(0x0a, start);
        const end = newline === -1 ? chunk.length : newline + 1;
        const piece = chunk.subarray(start, end);
        start = end;
        if (dropping === -1 && heldBytes + piece.length > maxBytes) {
          dropping = heldBytes;
          held = [];
          heldBytes = 0;
        }
        if (dropping !== -1) {
          dropping += piece.length;
          if (newline !== -1) {
            onDropped(dropping);
            dropping = -1;
          }
          continue;
        }
        held.push(piece);
        heldBytes += piece.length;
        if (newline !== -1) {
          this.push(Buffer.concat(held));
          held = [];
          heldBytes = 0;
        }
      }
      done();
    },
    flush(done) {
      if (heldBytes > 0) this.push(Buffer.concat(held));
      done();
    },
  });
  input.on('error', (err) => lines.destroy(err));
  return input.pipe(lines);
}
