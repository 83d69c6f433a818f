import { createHash } from 'node:crypto';

/**
 * The layout of a file that must not be believed once damaged on disk: a header line
 * `{"format":2,"sha256":"<hex>"}`, then the content, whose bytes the digest covers. Format 1 was the content
 * alone, on one line (JSON.stringify writes no newline), as flagops wrote it before checksums.
 */
const FORMAT = 2;

/** `content` (one line of JSON) with its checksum header. */
export function withChecksum(content: string): string {
  return `${JSON.stringify({ format: FORMAT, sha256: sha256(content) })}\n${content}`;
}

/**
 * What a file written by withChecksum holds: its content when the checksum matches; a reason when it does not
 * (or the header is not one this version reads). A file of one line is one written before checksums: its
 * content, `verified: false`, since nothing says it is what was written.
 */
export function readChecksummed(text: string): { content: string; verified: boolean } | { damaged: string } {
  const newline = text.indexOf('\n');
  if (newline === -1) return { content: text, verified: false };
  let header: { format?: unknown; sha256?: unknown } | undefined;
  try {
    header = JSON.parse(text.slice(0, newline)) as typeof header;
  } catch {
    // said below
  }
  if (header?.format !== FORMAT || typeof header.sha256 !== 'string') return { damaged: 'its header is not a checksum this version reads' };
  const content = text.slice(newline + 1);
  if (sha256(content) !== header.sha256) return { damaged: 'checksum mismatch' };
  return { content, verified: true };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
