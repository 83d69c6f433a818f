import {
  EMPTY_TREE_OID,
  hashFramed,
  isTreeMode,
  type ObjectType,
  objectHeader,
  parseCommit,
  parseTree,
  unframeObject,
} from './git-objects.js';
import type { ObjectStore } from './object-store.js';
import { buildPack } from './pack-writer.js';
import { changedTreeSpans, TreeBytes } from './tree-bytes.js';

/** What a commit adds to the repository its first parent is in: that parent, and the new objects, framed. */
export interface AddedObjects {
  parent: string;
  /** `type len\0content` of each object, concatenated: the commit first, then trees and blobs. */
  framed: Buffer;
}

/**
 * The objects `commit` adds to its first parent: the commit, and the trees and blobs along the paths it
 * changed, found by comparing tree bytes (changedTreeSpans) rather than parsing whole directories. Another
 * clone whose main is that parent holds the commit once it has them. Null when they come to more than
 * `maxBytes`, or the commit is a root or a merge (not what one control-plane change makes).
 */
export async function objectsAddedBy(store: ObjectStore, commit: string, maxBytes: number): Promise<AddedObjects | null> {
  const { content: commitBytes } = await store.read(commit);
  const parsed = await store.readCommit(commit);
  if (parsed.parents.length !== 1) return null;
  const parent = await store.readCommit(parsed.parents[0]);
  const frames: Buffer[] = [];
  let bytes = 0;
  // Measured before anything is copied: a 10,000-flag directory's tree alone is over any notice's limit.
  const add = (type: ObjectType, content: Buffer | TreeBytes): boolean => {
    const header = objectHeader(type, content.length);
    bytes += header.length + content.length;
    if (bytes > maxBytes) return false;
    frames.push(header, ...(content instanceof TreeBytes ? content.pieces() : [content]));
    return true;
  };
  if (!add('commit', commitBytes)) return null;
  const walk = async (before: string | null, after: string): Promise<boolean> => {
    if (before === after) return true;
    const afterBytes = await store.readTreeBytes(after);
    if (!add('tree', afterBytes)) return false;
    const beforeBytes = before === null ? TreeBytes.EMPTY : await store.readTreeBytes(before);
    const spans = changedTreeSpans(beforeBytes, afterBytes);
    const previous = new Map(spans.before.map((entry) => [entry.name, entry]));
    for (const entry of spans.after) {
      const old = previous.get(entry.name);
      if (old?.oid === entry.oid) continue;
      if (isTreeMode(entry.mode)) {
        if (!(await walk(old && isTreeMode(old.mode) ? old.oid : null, entry.oid))) return false;
      } else if (entry.mode === '160000') {
        return false; // a submodule's commit is not in this repository
      } else if (!add('blob', (await store.read(entry.oid)).content)) {
        return false;
      }
    }
    return true;
  };
  const complete = await walk(parent.tree === EMPTY_TREE_OID ? null : parent.tree, parsed.tree);
  return complete ? { parent: parsed.parents[0], framed: Buffer.concat(frames) } : null;
}

/** A packfile of what objectsAddedBy found: what a push of the commit onto its parent sends. */
export function packOfAdded(added: AddedObjects): Buffer {
  return buildPack(splitFramed(added.framed)).pack;
}

/** Splits concatenated framed objects (as objectsAddedBy makes them) into objects with their oids. */
export function splitFramed(framed: Buffer): Array<{ oid: string; type: ObjectType; content: Buffer }> {
  const objects: Array<{ oid: string; type: ObjectType; content: Buffer }> = [];
  let at = 0;
  while (at < framed.length) {
    const nul = framed.indexOf(0, at);
    const space = framed.indexOf(0x20, at);
    if (nul < 0 || space < 0 || space > nul) throw new Error('malformed git object header');
    const end = nul + 1 + Number(framed.toString('latin1', space + 1, nul));
    if (!Number.isSafeInteger(end) || end > framed.length) throw new Error('truncated git object');
    const one = framed.subarray(at, end);
    objects.push({ oid: hashFramed(one), ...unframeObject(one) });
    at = end;
  }
  return objects;
}

/**
 * Writes objects another clone made with objectsAddedBy; true when `commit` is complete here afterwards: it is
 * among them, its first parent is `parent` (present here), and every object its new trees name is either among
 * them or already here. False (and nothing referenced) otherwise: the caller fetches instead.
 */
export async function writeAddedObjects(store: ObjectStore, framed: Buffer, commit: string, parent: string): Promise<boolean> {
  let objects: ReturnType<typeof splitFramed>;
  try {
    objects = splitFramed(framed);
  } catch {
    return false;
  }
  const given = new Map(objects.map((o) => [o.oid, o]));
  const head = given.get(commit);
  if (head?.type !== 'commit' || parseCommit(head.content).parents[0] !== parent || store.readWrittenSync(parent) === null) return false;
  const present = (oid: string) => given.has(oid) || store.readWrittenSync(oid) !== null;
  for (const object of objects) {
    if (object.type === 'commit' && !present(parseCommit(object.content).tree)) return false;
    if (object.type === 'tree' && !parseTree(object.content).every((entry) => entry.mode === '160000' || present(entry.oid))) return false;
  }
  const batch = store.batch();
  for (const object of objects) batch.write(object.type, object.content);
  await batch.done();
  return true;
}
