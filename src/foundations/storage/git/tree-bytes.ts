import { changedBufferSpans, compareTreeEntries, readEntries, serializeTree, type TreeEntry, type TreeSpans } from './git-objects.js';

/**
 * A tree object's bytes, kept as an earlier version of the tree (the root) with a few runs of its entries
 * replaced, rather than as one buffer per version.
 *
 * Why: every kill rewrites its environment's directory, 10,000 entries (0.4 MB) at 10,000 flags, to change
 * the one entry of kills.yaml. A new 0.4 MB buffer per commit is memory outside V8's heap, and V8 starts a
 * full collection each time 64 MB more of it has been allocated: about every 120 kills, where marking a
 * heap of this size holds kills up for tens of milliseconds. An edit costs the bytes of the entries it
 * changed; the root's bytes are copied once per MAX_EDITS edits.
 */
export class TreeBytes {
  static readonly EMPTY = TreeBytes.of(Buffer.alloc(0), []);

  private constructor(
    private readonly root: TreeRoot,
    /** Runs of the root's entries replaced, in order, each separated from the next by an unchanged entry. */
    private readonly edits: readonly TreeEdit[],
    readonly length: number,
  ) {}

  /**
   * Bytes kept as they are. `entries`, when given, must be what they parse to: a tree built from these
   * entries (sharing their objects) is then kept as edits to these bytes.
   */
  static of(content: Buffer, entries?: readonly TreeEntry[]): TreeBytes {
    return new TreeBytes({ content, entries }, [], content.length);
  }

  /** What keeping these bytes keeps alive, at most (the root may be shared with other versions). */
  get retainedBytes(): number {
    const { content } = this.root;
    let bytes = Math.max(content.length, content.buffer.byteLength) + 64;
    for (const edit of this.edits) bytes += edit.bytes.length + 64;
    return bytes;
  }

  /** The bytes in order, as slices of the root and the edits (no copy). */
  pieces(): Buffer[] {
    if (this.edits.length === 0) return [this.root.content];
    return this.region(0, offsetsOf(this.root).length - 1);
  }

  /** The bytes as one buffer: a copy, unless no entry was replaced. */
  flat(): Buffer {
    return this.edits.length === 0 ? this.root.content : Buffer.concat(this.pieces(), this.length);
  }

  /**
   * This tree with its entries replaced by `entries` (in tree order), which keep the objects of this tree's
   * unchanged entries. Equal to TreeBytes.of(serializeTree(entries)), without serializing or copying the
   * unchanged ones.
   */
  splice(entries: readonly TreeEntry[]): TreeBytes {
    const rootEntries = this.root.entries;
    if (rootEntries === undefined || this.root.content.length < SPLICE_FROM_BYTES) return TreeBytes.of(serializeTree(entries), entries);
    const edits: TreeEdit[] = [];
    let from = -1; // where the edit under way starts, in the root's entries; -1 when none is
    let added: TreeEntry[] = [];
    const close = (to: number) => {
      if (from < 0) return;
      edits.push({ from, to, bytes: serializeTree(added) });
      from = -1;
      added = [];
    };
    let i = 0;
    let j = 0;
    while (i < entries.length || j < rootEntries.length) {
      if (i < entries.length && j < rootEntries.length && entries[i] === rootEntries[j]) {
        close(j);
        i++;
        j++;
        continue;
      }
      if (from < 0) from = j;
      const order = j >= rootEntries.length ? 1 : i >= entries.length ? -1 : compareTreeEntries(rootEntries[j], entries[i]);
      if (order < 0) {
        j++; // the root's entry is gone
      } else {
        added.push(entries[i++]);
        if (order === 0) j++; // replaced: same name and kind
      }
    }
    close(j);
    if (edits.length === 0) return this.edits.length === 0 ? this : new TreeBytes(this.root, [], this.root.content.length);
    const offsets = offsetsOf(this.root);
    let length = this.root.content.length;
    let editBytes = 0;
    for (const edit of edits) {
      length += edit.bytes.length - (offsets[edit.to] - offsets[edit.from]);
      editBytes += edit.bytes.length;
    }
    const spliced = new TreeBytes(this.root, edits, length);
    // Many edits make every comparison and write walk more pieces: start from a copy of the whole tree again.
    return edits.length > MAX_EDITS || editBytes > MAX_EDIT_BYTES ? TreeBytes.of(spliced.flat(), entries) : spliced;
  }

  /**
   * The entries of two versions of a tree from the first to the last that may differ (both lists in tree
   * order); every entry outside them is the same in both. Versions with the same root compare their edits;
   * others their bytes (see changedBufferSpans).
   */
  static spans(before: TreeBytes, after: TreeBytes): TreeSpans {
    if (before.root !== after.root) return changedBufferSpans(before.flat(), after.flat());
    const differing = [
      ...before.edits.filter((edit) => !hasEdit(after.edits, edit)),
      ...after.edits.filter((edit) => !hasEdit(before.edits, edit)),
    ];
    if (differing.length === 0) return { before: [], after: [] };
    // No edit of either side reaches across lo or hi: an edit that is in both is disjoint from the other edits
    // of each, and so from every differing one. Both sides are cut at the same entries of the root.
    const lo = Math.min(...differing.map((edit) => edit.from));
    const hi = Math.max(...differing.map((edit) => edit.to));
    const entriesOf = (tree: TreeBytes) => {
      const bytes = Buffer.concat(tree.region(lo, hi));
      const out: TreeEntry[] = [];
      readEntries(bytes, 0, bytes.length, out);
      return out;
    };
    return { before: entriesOf(before), after: entriesOf(after) };
  }

  /** The bytes standing for the root's entries lo to hi (exclusive), with the edits that lie within them. */
  private region(lo: number, hi: number): Buffer[] {
    const { content } = this.root;
    const offsets = offsetsOf(this.root);
    const parts: Buffer[] = [];
    let at = lo;
    for (const edit of this.edits) {
      if (edit.from < lo || edit.to > hi) continue;
      if (edit.from > at) parts.push(content.subarray(offsets[at], offsets[edit.from]));
      parts.push(edit.bytes);
      at = edit.to;
    }
    if (hi > at) parts.push(content.subarray(offsets[at], offsets[hi]));
    return parts;
  }
}

/** Smaller trees are serialized again: it costs microseconds, and a copy of them is small. */
const SPLICE_FROM_BYTES = 16 * 1024;
/** Past this many edits (or bytes of them) a spliced tree is copied into one buffer. */
const MAX_EDITS = 32;
const MAX_EDIT_BYTES = 16 * 1024;

interface TreeRoot {
  content: Buffer;
  /** What `content` parses to; absent for bytes read without parsing them (such a tree is not spliced). */
  entries?: readonly TreeEntry[];
  /** Where each entry starts in `content`, and its length last: found when first needed. */
  offsets?: Uint32Array;
}

/** The root's entries from..to (exclusive; from === to inserts) replaced by `bytes` (serialized entries). */
interface TreeEdit {
  from: number;
  to: number;
  bytes: Buffer;
}

function offsetsOf(root: TreeRoot): Uint32Array {
  if (root.offsets) return root.offsets;
  const { content } = root;
  const starts: number[] = [];
  for (let at = 0; at < content.length; at = content.indexOf(0, at) + 21) starts.push(at);
  starts.push(content.length);
  root.offsets = Uint32Array.from(starts);
  return root.offsets;
}

function hasEdit(edits: readonly TreeEdit[], edit: TreeEdit): boolean {
  return edits.some((other) => other === edit || (other.from === edit.from && other.to === edit.to && other.bytes.equals(edit.bytes)));
}

/**
 * The last few comparisons of big trees, by their bytes' objects: after a commit, the served state, the
 * versions it reports and the flag-health history each compare the commit's directories with its parent's,
 * the same two cached objects (tree objects never change).
 */
const recentSpans: Array<{ before: TreeBytes; after: TreeBytes; spans: TreeSpans }> = [];
const REMEMBERED_SPANS = 4;
const REMEMBER_SPANS_FROM_BYTES = 64 * 1024;

/**
 * The entries of two tree objects from the first that may differ to the last (both lists in tree order); every
 * entry outside them is the same in both. A one-file change in a 10,000-entry directory parses one or two entries
 * instead of 20,000. Remembered for big trees: read-only.
 */
export function changedTreeSpans(before: TreeBytes, after: TreeBytes): TreeSpans {
  for (const known of recentSpans) if (known.before === before && known.after === after) return known.spans;
  const spans = TreeBytes.spans(before, after);
  if (before.length + after.length >= REMEMBER_SPANS_FROM_BYTES) {
    recentSpans.unshift({ before, after, spans });
    if (recentSpans.length > REMEMBERED_SPANS) recentSpans.pop();
  }
  return spans;
}

/** An entry that differs between two versions of a tree: absent before (added), absent after (removed), or another oid or mode. */
export interface TreeEntryChange {
  name: string;
  before?: TreeEntry;
  after?: TreeEntry;
}

/**
 * The entries that differ between two tree objects, by name, from the spans where they may differ
 * (changedTreeSpans): what a commit changed in a directory of 10,000 files costs the entries it changed, not
 * 20,000 parsed entries. Entries of the new tree first, in tree order, then those removed.
 */
export function changedTreeEntries(before: TreeBytes, after: TreeBytes): TreeEntryChange[] {
  const spans = changedTreeSpans(before, after);
  const old = new Map(spans.before.map((entry) => [entry.name, entry]));
  const out: TreeEntryChange[] = [];
  for (const entry of spans.after) {
    const was = old.get(entry.name);
    if (was === undefined) {
      out.push({ name: entry.name, after: entry });
      continue;
    }
    old.delete(entry.name);
    if (was.oid !== entry.oid || was.mode !== entry.mode) out.push({ name: entry.name, before: was, after: entry });
  }
  for (const was of old.values()) out.push({ name: was.name, before: was });
  return out;
}
