import { createHash } from 'node:crypto';

/** Git's object formats (loose object framing, trees, commits): pure functions, no I/O. */

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export const EMPTY_TREE_OID = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

export const MODE_FILE = '100644';
export const MODE_TREE = '40000';

export interface TreeEntry {
  /** Mode as git writes it: `100644`, `100755`, `120000`, `160000` or `40000`. */
  mode: string;
  name: string;
  oid: string;
}

export function isTreeMode(mode: string): boolean {
  return mode === MODE_TREE || mode === '040000';
}

/** `type len\0`: what precedes an object's content when git hashes and deflates it. */
export function objectHeader(type: ObjectType, length: number): Buffer {
  return Buffer.from(`${type} ${length}\0`);
}

/** `type len\0content`: what git hashes and deflates. */
export function frameObject(type: ObjectType, content: Uint8Array): Buffer {
  return Buffer.concat([objectHeader(type, content.byteLength), content]);
}

export function hashFramed(framed: Uint8Array): string {
  return createHash('sha1').update(framed).digest('hex');
}

/** hashFramed of header and content (in pieces), without copying them into one buffer. */
export function hashObjectParts(header: Uint8Array, ...content: Uint8Array[]): string {
  const hash = createHash('sha1').update(header);
  for (const piece of content) hash.update(piece);
  return hash.digest('hex');
}

export function hashObject(type: ObjectType, content: Uint8Array): string {
  return hashFramed(frameObject(type, content));
}

/** Splits a framed (inflated loose) object into its type and content. */
export function unframeObject(framed: Buffer): { type: ObjectType; content: Buffer } {
  const space = framed.indexOf(0x20);
  const nul = framed.indexOf(0, space);
  if (space < 0 || nul < 0) throw new Error('malformed git object header');
  const type = framed.toString('latin1', 0, space) as ObjectType;
  const length = Number(framed.toString('latin1', space + 1, nul));
  const content = framed.subarray(nul + 1);
  if (content.length !== length) throw new Error(`git object length ${content.length} does not match its header ${length}`);
  return { type, content };
}

export function parseTree(content: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  readEntries(content, 0, content.length, entries);
  return entries;
}

/** Entries of the spans where two versions of a tree may differ, each in tree order; shared between callers: read-only. */
export interface TreeSpans {
  readonly before: readonly TreeEntry[];
  readonly after: readonly TreeEntry[];
}

/**
 * The entries of two tree objects from where their bytes first differ to where they agree again to the end,
 * parsed from each (both lists in tree order); every entry outside them is the same in both. The identical start
 * is skipped by comparing bytes, then walking entry boundaries (no strings made), and the identical end by
 * comparing bytes from the end.
 */
export function changedBufferSpans(before: Buffer, after: Buffer): TreeSpans {
  const shorter = Math.min(before.length, after.length);
  let same = 0;
  while (same + SPAN <= shorter && before.compare(after, same, same + SPAN, same, same + SPAN) === 0) same += SPAN;
  while (same < shorter && before[same] === after[same]) same++;
  let sameEnd = 0;
  const room = shorter - same;
  while (
    sameEnd + SPAN <= room &&
    before.compare(
      after,
      after.length - sameEnd - SPAN,
      after.length - sameEnd,
      before.length - sameEnd - SPAN,
      before.length - sameEnd,
    ) === 0
  )
    sameEnd += SPAN;
  while (sameEnd < room && before[before.length - 1 - sameEnd] === after[after.length - 1 - sameEnd]) sameEnd++;
  // The entry the first difference falls in starts at the same place in both: everything before it is equal.
  // Its start is found by walking entry ends (the NUL after a name, then a 20-byte id) with a plain loop, a little
  // cheaper at 10,000 entries than two indexOf calls an entry.
  let start = 0;
  for (;;) {
    let nul = start;
    while (nul < shorter && before[nul] !== 0) nul++;
    if (nul >= shorter || nul + 21 > same) break;
    start = nul + 21;
  }
  const spanBefore: TreeEntry[] = [];
  const spanAfter: TreeEntry[] = [];
  let i = readEntries(before, start, before.length - sameEnd, spanBefore);
  let j = readEntries(after, start, after.length - sameEnd, spanAfter);
  // Both at entry boundaries inside the equal end, with as much left: what is left is the same entries.
  while (before.length - i !== after.length - j) {
    if (before.length - i > after.length - j) i = readEntries(before, i, i + 1, spanBefore);
    else j = readEntries(after, j, j + 1, spanAfter);
  }
  return { before: spanBefore, after: spanAfter };
}

const SPAN = 4096;

/** Parses entries from `from` (an entry boundary) into `into` until at or past `until`; returns where it stopped. */
export function readEntries(content: Buffer, from: number, until: number, into: TreeEntry[]): number {
  let i = from;
  while (i < until && i < content.length) {
    const space = content.indexOf(0x20, i);
    const nul = content.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > content.length) throw new Error('malformed tree object');
    into.push({
      mode: content.toString('latin1', i, space),
      name: content.toString('utf8', space + 1, nul),
      oid: content.toString('hex', nul + 1, nul + 21),
    });
    i = nul + 21;
  }
  return i;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Git's tree order: by name bytes, comparing a directory as if its name ended in `/`. UTF-16 order equals
 * UTF-8 byte order except around astral characters, which take the slow path.
 */
export function compareTreeEntries(a: TreeEntry, b: TreeEntry): number {
  const ka = isTreeMode(a.mode) ? `${a.name}/` : a.name;
  const kb = isTreeMode(b.mode) ? `${b.name}/` : b.name;
  if (SURROGATE.test(ka) || SURROGATE.test(kb)) return Buffer.compare(Buffer.from(ka), Buffer.from(kb));
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** Serializes entries that are already in git order (see compareTreeEntries). */
export function serializeTree(entries: readonly TreeEntry[]): Buffer {
  let size = 0;
  for (const entry of entries) size += (isTreeMode(entry.mode) ? MODE_TREE : entry.mode).length + Buffer.byteLength(entry.name) + 22;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const entry of entries) {
    at += out.write(`${isTreeMode(entry.mode) ? MODE_TREE : entry.mode} ${entry.name}\0`, at, 'utf8');
    at += out.write(entry.oid, at, 'hex');
  }
  return out;
}

export interface GitIdentity {
  name: string;
  email: string;
  /** Seconds since the epoch. */
  timestamp: number;
  /** Minutes east of UTC, as git writes it (`+0130` is 90, `-0500` is -300). */
  timezoneOffset: number;
}

export interface CommitObject {
  tree: string;
  parents: string[];
  author: GitIdentity;
  committer: GitIdentity;
  message: string;
}

/** Names and emails cannot carry `<`, `>` or line breaks in a commit header. */
export function sanitizeIdentityPart(value: string): string {
  return value.replace(/[<>\r\n]/g, '').trim();
}

function formatIdentity(who: GitIdentity): string {
  const sign = who.timezoneOffset < 0 ? '-' : '+';
  const abs = Math.abs(who.timezoneOffset);
  const tz = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
  return `${sanitizeIdentityPart(who.name)} <${sanitizeIdentityPart(who.email)}> ${who.timestamp} ${tz}`;
}

const IDENTITY = /^(.*?) ?<([^>]*)> (\d+) ([+-])(\d{2})(\d{2})$/;

function parseIdentity(line: string): GitIdentity {
  const m = IDENTITY.exec(line);
  if (!m) return { name: line, email: '', timestamp: 0, timezoneOffset: 0 };
  const minutes = Number(m[5]) * 60 + Number(m[6]);
  return { name: m[1], email: m[2], timestamp: Number(m[3]), timezoneOffset: m[4] === '-' ? -minutes : minutes };
}

export function serializeCommit(commit: CommitObject): Buffer {
  const lines = [`tree ${commit.tree}`, ...commit.parents.map((p) => `parent ${p}`)];
  lines.push(`author ${formatIdentity(commit.author)}`, `committer ${formatIdentity(commit.committer)}`);
  return Buffer.from(`${lines.join('\n')}\n\n${commit.message}`, 'utf8');
}

export function parseCommit(content: Buffer): CommitObject {
  const text = content.toString('utf8');
  const end = text.indexOf('\n\n');
  const header = end < 0 ? text : text.slice(0, end);
  const message = end < 0 ? '' : text.slice(end + 2);
  let tree = '';
  const parents: string[] = [];
  let author: GitIdentity | undefined;
  let committer: GitIdentity | undefined;
  for (const line of header.split('\n')) {
    // Continuation lines (a gpgsig, a mergetag) belong to the header above; none of them matter here.
    if (line.startsWith(' ')) continue;
    const space = line.indexOf(' ');
    const key = line.slice(0, space);
    const value = line.slice(space + 1);
    if (key === 'tree') tree = value;
    else if (key === 'parent') parents.push(value);
    else if (key === 'author') author = parseIdentity(value);
    else if (key === 'committer') committer = parseIdentity(value);
  }
  if (!tree || !author) throw new Error('malformed commit object');
  return { tree, parents, author, committer: committer ?? author, message };
}

/** The commit an annotated tag points at (tags of tags are followed by the caller). */
export function parseTagTarget(content: Buffer): { object: string; type: ObjectType } {
  const text = content.toString('utf8');
  const object = /^object ([0-9a-f]{40})$/m.exec(text)?.[1];
  const type = /^type (\w+)$/m.exec(text)?.[1] as ObjectType | undefined;
  if (!object || !type) throw new Error('malformed tag object');
  return { object, type };
}
