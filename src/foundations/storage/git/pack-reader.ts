import { close, closeSync, existsSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import type { ObjectType } from './git-objects.js';
import { Lru } from './lru.js';

/**
 * Reads objects from git's packfiles (`objects/pack/*.pack` with a version-2 `.idx`), as `git push` and
 * `git gc` leave them. Synchronous: a small pack is read into memory once, a big one by positional reads,
 * so a cold load of tens of thousands of objects costs an inflate each (plus delta bases, which are cached).
 */

const TYPES: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const OFS_DELTA = 6;
/**
 * Packs up to this size are read into memory whole (a 10,000-flag repository packs to a few MiB), and their
 * file closed: a repository holds a pack per commit between roll-ups (ObjectStore.writeObjects), and each
 * repository of the registry would otherwise keep dozens of descriptors open.
 */
const HOLD_PACK_BYTES = 64 * 1024 * 1024;
const REF_DELTA = 7;

interface PackIndex {
  /** The open pack file, for one too big to hold; undefined when `data` holds it. */
  fd: number | undefined;
  /** The pack file's inode when opened: a pack rewritten under the same name has another. */
  ino: number;
  /** The whole pack, when small enough to hold: one read instead of one per object. */
  data: Buffer | undefined;
  count: number;
  fanout: Uint32Array;
  /** N × 20-byte object ids, sorted. */
  oids: Buffer;
  /** The first four bytes of each id, for a binary search on numbers rather than buffers. */
  prefixes: Uint32Array;
  /** Offset in the pack of the i-th object of `oids`. */
  offsets: number[];
  /** Where each entry ends: the next entry's offset, or the start of the trailing checksum. */
  ends: Map<number, number>;
}

export interface PackedObject {
  type: ObjectType;
  content: Buffer;
}

export class PackReader {
  private readonly packs = new Map<string, PackIndex>();
  /** Resolved objects by `pack:offset`, mostly delta bases shared by many objects. */
  private readonly resolved = new Lru<string, PackedObject>(2_000);
  /** Packs whose index is not version 2: read by the caller's fallback. */
  readonly unsupported = new Set<string>();

  constructor(private readonly packDir: string) {}

  /**
   * The object from a pack already opened, or null; no file-system call unless it is found. A pack an object
   * does not read from is forgotten (and the error thrown): the next read opens it again from disk, so a pack
   * repaired in place is read as repaired even when it was held in memory.
   */
  readKnown(oid: string): PackedObject | null {
    const key = Buffer.from(oid, 'hex');
    for (const [name, pack] of this.packs) {
      const at = find(pack, key);
      if (at < 0) continue;
      try {
        return this.readAt(name, pack, pack.offsets[at]);
      } catch (err) {
        if (pack.fd !== undefined) closeLater(pack.fd);
        this.packs.delete(name);
        throw err;
      }
    }
    return null;
  }

  /** The name (`pack-<checksum>`) of an opened pack that holds the object, or null. */
  locate(oid: string): string | null {
    const key = Buffer.from(oid, 'hex');
    for (const [name, pack] of this.packs) if (find(pack, key) >= 0) return name;
    return null;
  }

  /** Opens a pack just written (`pack-<checksum>`), so its objects are found without a rescan. */
  add(name: string): void {
    const current = this.packs.get(name);
    // Written again with the same objects: the file is new, the old descriptor reads the replaced one.
    if (current && inodeOf(join(this.packDir, `${name}.pack`)) === current.ino) return;
    if (current?.fd !== undefined) closeLater(current.fd);
    const pack = openUnlessGone(join(this.packDir, name));
    // Gone already: a repack beside us took its objects into a pack of its own, which a rescan finds.
    if (pack === GONE) {
      this.packs.delete(name);
      this.rescan();
    } else if (pack) this.packs.set(name, pack);
    else this.packs.delete(name);
  }

  /** The object, or null when no pack holds it, after looking for packs that appeared since (a push, a gc). */
  read(oid: string): PackedObject | null {
    return this.readKnown(oid) ?? (this.rescan() ? this.readKnown(oid) : null);
  }

  /** Full ids in any pack that start with `prefix` (hex). */
  matching(prefix: string): string[] {
    this.rescan();
    const out = new Set<string>();
    for (const pack of this.packs.values()) {
      for (let i = 0; i < pack.count; i++) {
        const hex = pack.oids.toString('hex', i * 20, i * 20 + 20);
        if (hex.startsWith(prefix)) out.add(hex);
      }
    }
    return [...out];
  }

  /**
   * Whether a pack file on disk holds the object now: the packs held open may have been removed under us (a
   * repack replaces them, which a rescan follows; a pack deleted by hand is gone with its objects).
   */
  onDisk(oid: string): boolean {
    const found = () => {
      this.rescan();
      const name = this.locate(oid);
      return name !== null && existsSync(join(this.packDir, `${name}.pack`)) && existsSync(join(this.packDir, `${name}.idx`));
    };
    // Twice: a repack may remove the pack found between the listing and the look (its objects are in the new one).
    return found() || found();
  }

  /** Opens packs that appeared and closes those that are gone (after a repack), without waiting for a miss. */
  refresh(): void {
    this.rescan();
  }

  close(): void {
    for (const pack of this.packs.values()) if (pack.fd !== undefined) closeSync(pack.fd);
    this.packs.clear();
  }

  /**
   * Opens packs that appeared and forgets those `git gc` removed; true when the set changed. A pack listed and
   * gone before it is opened was removed by a repack, which wrote the pack holding its objects first: the
   * directory is read again (a few times at most) so that pack is found, rather than the read failing.
   */
  private rescan(): boolean {
    let changed = false;
    for (let pass = 1; pass <= RESCAN_PASSES; pass++) {
      const { changed: changedNow, vanished } = this.rescanOnce();
      changed ||= changedNow;
      if (!vanished) break;
    }
    return changed;
  }

  private rescanOnce(): { changed: boolean; vanished: boolean } {
    let names: string[];
    try {
      names = readdirSync(this.packDir)
        .filter((n) => n.endsWith('.idx'))
        .map((n) => n.slice(0, -4));
    } catch {
      names = [];
    }
    let changed = false;
    for (const [name, pack] of this.packs) {
      // Gone, or replaced by a pack of the same name (a repack of the same objects): the open file is stale.
      if (!names.includes(name) || inodeOf(join(this.packDir, `${name}.pack`)) !== pack.ino) {
        if (pack.fd !== undefined) closeLater(pack.fd);
        this.packs.delete(name);
        changed = true;
      }
    }
    let vanished = false;
    for (const name of names) {
      if (this.packs.has(name) || this.unsupported.has(name)) continue;
      const pack = openUnlessGone(join(this.packDir, name));
      if (pack === GONE) {
        vanished = true;
        continue;
      }
      if (pack) this.packs.set(name, pack);
      else this.unsupported.add(name);
      changed = true;
    }
    return { changed, vanished };
  }

  /** `asBase`: the object is a delta base, worth caching since its deltas' neighbours share it. */
  private readAt(name: string, pack: PackIndex, offset: number, asBase = false): PackedObject {
    const cacheKey = `${name}:${offset}`;
    const cached = this.resolved.get(cacheKey);
    if (cached) return cached;
    const end = pack.ends.get(offset)!;
    let raw: Buffer;
    if (pack.data) {
      raw = pack.data.subarray(offset, end);
    } else {
      raw = readFully(pack.fd!, end - offset, offset);
    }
    let at = 0;
    let byte = raw[at++];
    const type = (byte >> 4) & 7;
    while (byte & 0x80) byte = raw[at++];
    let object: PackedObject;
    if (type === OFS_DELTA) {
      byte = raw[at++];
      let distance = byte & 0x7f;
      while (byte & 0x80) {
        byte = raw[at++];
        distance = ((distance + 1) * 128) | (byte & 0x7f);
      }
      const base = this.readAt(name, pack, offset - distance, true);
      object = { type: base.type, content: applyDelta(base.content, inflateSync(raw.subarray(at))) };
    } else if (type === REF_DELTA) {
      const baseOid = raw.toString('hex', at, at + 20);
      const base = this.readBase(baseOid);
      if (!base) throw new Error(`delta base ${baseOid} of a packed object is missing`);
      object = { type: base.type, content: applyDelta(base.content, inflateSync(raw.subarray(at + 20))) };
    } else {
      const objectType = TYPES[type];
      if (!objectType) throw new Error(`unknown packed object type ${type}`);
      object = { type: objectType, content: inflateSync(raw.subarray(at)) };
    }
    // Small bases only: those of flag files and small trees, which many deltas share.
    if (asBase && object.content.length < 64 * 1024) this.resolved.set(cacheKey, object);
    return object;
  }

  private readBase(oid: string): PackedObject | null {
    const key = Buffer.from(oid, 'hex');
    for (const [name, pack] of this.packs) {
      const at = find(pack, key);
      if (at >= 0) return this.readAt(name, pack, pack.offsets[at], true);
    }
    return null;
  }
}

/**
 * Closes a removed pack's file on the thread pool: the last close of a deleted file frees its blocks, which
 * waits on the file system's journal (4 ms a file at load 9; ~200 ms for a roll-up's 50 packs).
 */
function closeLater(fd: number): void {
  close(fd, () => {});
}

function inodeOf(file: string): number | undefined {
  try {
    return statSync(file).ino;
  } catch {
    return undefined;
  }
}

/** How many times rescan reads the pack directory while packs it listed are gone when opened. */
const RESCAN_PASSES = 3;
const GONE = Symbol('gone');

/** openPack, or GONE when its index or pack file no longer exists (removed by a repack since it was listed). */
function openUnlessGone(base: string): PackIndex | null | typeof GONE {
  try {
    return openPack(base);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return GONE;
    throw err;
  }
}

function openPack(base: string): PackIndex | null {
  const idxFd = openSync(`${base}.idx`, 'r');
  let idx: Buffer;
  try {
    idx = readFully(idxFd, fstatSync(idxFd).size, 0);
  } finally {
    closeSync(idxFd);
  }
  if (idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) return null;
  const fanout = new Uint32Array(256);
  for (let i = 0; i < 256; i++) fanout[i] = idx.readUInt32BE(8 + i * 4);
  const count = fanout[255];
  const oidsAt = 8 + 256 * 4;
  const offsetsAt = oidsAt + count * 20 + count * 4;
  const largeAt = offsetsAt + count * 4;
  const offsets: number[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const small = idx.readUInt32BE(offsetsAt + i * 4);
    offsets[i] = small & 0x80000000 ? Number(idx.readBigUInt64BE(largeAt + (small & 0x7fffffff) * 8)) : small;
  }
  let fd: number | undefined = openSync(`${base}.pack`, 'r');
  const { size: packSize, ino } = fstatSync(fd);
  let data: Buffer | undefined;
  if (packSize <= HOLD_PACK_BYTES) {
    try {
      data = readFully(fd, packSize, 0);
    } finally {
      closeSync(fd);
      fd = undefined;
    }
  }
  const sorted = [...offsets].sort((a, b) => a - b);
  const ends = new Map<number, number>();
  for (let i = 0; i < sorted.length; i++) ends.set(sorted[i], i + 1 < sorted.length ? sorted[i + 1] : packSize - 20);
  const oids = Buffer.from(idx.subarray(oidsAt, oidsAt + count * 20));
  const prefixes = new Uint32Array(count);
  for (let i = 0; i < count; i++) prefixes[i] = oids.readUInt32BE(i * 20);
  return { fd, ino, data, count, fanout, oids, prefixes, offsets, ends };
}

/** `length` bytes from `position`: readSync may return fewer than asked for. */
function readFully(fd: number, length: number, position: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, out, done, length - done, position + done);
    if (n === 0) throw new Error('packfile ended early');
    done += n;
  }
  return out;
}

/** Index of `oid` in the pack, or -1: binary search on the ids' first four bytes, then the full id. */
function find(pack: PackIndex, oid: Buffer): number {
  const prefix = oid.readUInt32BE(0);
  let lo = oid[0] === 0 ? 0 : pack.fanout[oid[0] - 1];
  let hi = pack.fanout[oid[0]];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pack.prefixes[mid] < prefix) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < pack.count && pack.prefixes[i] === prefix; i++) {
    if (pack.oids.compare(oid, 0, 20, i * 20, i * 20 + 20) === 0) return i;
  }
  return -1;
}

function readVarint(delta: Buffer, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  let byte: number;
  do {
    byte = delta[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [value, at];
}

/** git's delta format: source and target sizes, then copy-from-source and insert-literal instructions. */
export function applyDelta(source: Buffer, delta: Buffer): Buffer {
  const [sourceSize, afterSource] = readVarint(delta, 0);
  if (sourceSize !== source.length) throw new Error('delta does not apply: source size differs');
  const [targetSize, afterTarget] = readVarint(delta, afterSource);
  let at = afterTarget;
  const target = Buffer.allocUnsafe(targetSize);
  let out = 0;
  while (at < delta.length) {
    const op = delta[at++];
    if (op & 0x80) {
      let offset = 0;
      let size = 0;
      for (let bit = 0; bit < 4; bit++) if (op & (1 << bit)) offset |= delta[at++] << (bit * 8);
      for (let bit = 0; bit < 3; bit++) if (op & (0x10 << bit)) size |= delta[at++] << (bit * 8);
      offset >>>= 0;
      if (size === 0) size = 0x10000;
      out += source.copy(target, out, offset, offset + size);
    } else if (op > 0) {
      out += delta.copy(target, out, at, at + op);
      at += op;
    } else {
      throw new Error('delta has a reserved instruction');
    }
  }
  if (out !== targetSize) throw new Error('delta does not apply: target size differs');
  return target;
}
