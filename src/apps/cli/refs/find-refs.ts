import { closeSync, openSync, readSync } from 'node:fs';
import { sep } from 'node:path';
import { languageOf } from './call-shapes.js';
import type { FlagStatus, StatusOf } from './flag-status.js';
import { scanText } from './scan-text.js';
import { walkSource } from './walk-source.js';

/** Files larger than this are skipped: generated bundles, data dumps and logs, not code a team edits. */
export const MAX_FILE_BYTES = 1024 * 1024;
/** As git does, a file with a NUL byte in its first 8,000 bytes is binary. */
const SNIFF_BYTES = 8000;

/** The flags a scan looks for. */
export interface FlagCatalog {
  /** The flags listed in the report whether referenced or not: every flag that is not archived. */
  listed: readonly string[];
  /** Every key a flag has, archived flags' too: a reference to one is reported, a call with one is not unknown. */
  known: ReadonlySet<string>;
}

export interface FileLine {
  file: string;
  line: number;
}

/** What `flagops refs --format json` prints. */
export interface RefsReport {
  flags: { key: string; status: FlagStatus; references: FileLine[] }[];
  unknownKeys: ({ key: string } & FileLine)[];
}

export interface RefsScan {
  report: RefsReport;
  filesScanned: number;
}

export interface FindRefsOptions {
  /** The source tree's root. */
  dir: string;
  catalog: FlagCatalog;
  statusOf: StatusOf;
  /** Directories (relative to `dir`) not to enter. */
  exclude?: ReadonlySet<string>;
}

/**
 * Scans a source tree for flag keys: every quoted literal that is a flag's key is a reference (file relative to
 * `dir`, `/`-separated, and 1-based line); every literal key passed to an SDK evaluation call that no flag has
 * is an unknown key. Flags are listed by key; an archived flag only when something still references it.
 */
export function findRefs(options: FindRefsOptions): RefsScan {
  const { dir, catalog, statusOf } = options;
  const references = new Map<string, FileLine[]>();
  const unknownKeys: RefsReport['unknownKeys'] = [];
  let filesScanned = 0;
  // One byte more than the largest file read: a file that fills it is too large.
  const buffer = Buffer.allocUnsafe(MAX_FILE_BYTES + 1);
  const root = dir.endsWith(sep) ? dir : `${dir}${sep}`;
  walkSource(
    dir,
    (file) => {
      const text = readSourceFile(root + file, buffer);
      if (text === undefined) return;
      filesScanned++;
      const found = scanText(text, catalog.known, languageOf(file));
      for (const { key, line } of found.references) {
        const list = references.get(key);
        if (list) list.push({ file, line });
        else references.set(key, [{ file, line }]);
      }
      for (const { key, line } of found.unknown) unknownKeys.push({ key, file, line });
    },
    { exclude: options.exclude },
  );
  const keys = new Set([...catalog.listed, ...references.keys()]);
  const flags = [...keys].sort(byText).map((key) => ({ key, status: statusOf(key), references: references.get(key) ?? [] }));
  return { report: { flags, unknownKeys }, filesScanned };
}

/**
 * A file's text, or undefined when it is not worth reading: too large, binary, or gone. Read as latin1 into
 * one reused buffer: keys are ASCII and offsets only serve to count lines, so no UTF-8 decoding is needed.
 */
function readSourceFile(path: string, buffer: Buffer): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    // No fstat: one read into a buffer one byte larger than the limit both reads a file and tells if it is too
    // large. A short read of a regular file is its end.
    let length = 0;
    for (;;) {
      const wanted = buffer.length - length;
      const n = readSync(fd, buffer, length, wanted, null);
      length += n;
      if (n === 0 || n < wanted || length === buffer.length) break;
    }
    if (length === 0 || length > MAX_FILE_BYTES) return undefined;
    if (buffer.subarray(0, Math.min(length, SNIFF_BYTES)).includes(0)) return undefined;
    return buffer.toString('latin1', 0, length);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
