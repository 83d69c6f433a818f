import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import git from 'isomorphic-git';
import { StorageFaultError } from '../../errors/kinds.js';
import { fsync } from './fsync.js';
import {
  type CommitObject,
  EMPTY_TREE_OID,
  hashObjectParts,
  type ObjectType,
  objectHeader,
  parseCommit,
  parseTree,
  type TreeEntry,
  unframeObject,
} from './git-objects.js';
import { corruptObject, writeFault } from './io-faults.js';
import { Lru } from './lru.js';
import { PackFilesCheck } from './pack-files-check.js';
import { PackReader } from './pack-reader.js';
import { buildPack, deflateObject, STORE_ABOVE_BYTES, storedZlib } from './pack-writer.js';
import { TreeBytes } from './tree-bytes.js';

/** An object the repository should have and does not: a storage fault (a revision a caller names is theirs to get right). */
export class ObjectNotFoundError extends StorageFaultError {
  constructor(readonly oid: string) {
    super('read', `git object ${oid.slice(0, 12)} is missing`);
  }
}

/** A parsed tree, with its serialized content when that is exactly what serializeTree(entries) writes. */
export interface CachedTree {
  entries: readonly TreeEntry[];
  content?: TreeBytes;
}

export interface ObjectStoreOptions {
  /** fsync each object before it is renamed into place (so the ref never points at a lost object). */
  durable?: boolean;
}

/**
 * The object database of one repository. Loose objects are read and written here directly (node's zlib;
 * written to a temp file and renamed, which isomorphic-git's writeObject does not do). Packed objects, which
 * `git push` and `git gc` leave, are read by PackReader; isomorphic-git reads the packs it cannot (index v1).
 */
export class ObjectStore {
  /**
   * Parsed trees, weighed by entry count: old versions of a 10,000-flag directory must not pile up. Most keep
   * their bytes too (for TreeBytes.splice): ~40 bytes an entry for one read from the repository, the bytes of
   * the entries it changed for one written here (the rest shared with the version it was made from).
   */
  private readonly trees = new Lru<string, CachedTree>(200_000, (tree) => tree.entries.length + 1);
  private readonly commits = new Lru<string, CommitObject>(10_000);
  /**
   * Objects of commits under way, readable before their files are in place (written, fsynced, then renamed):
   * a commit's new state is assembled from its trees while they are written, and the next commits of a series
   * are built on them, whatever the tree cache still holds. Counted, since two batches may write one object.
   */
  private readonly unwritten = new Map<string, { object: BatchObject; holds: number }>();
  /** isomorphic-git's cache of pack indexes and packs; shared across reads so a pack is loaded once. */
  private readonly packCache = {};
  private readonly packs: PackReader;
  /** The pack files as they were written or first seen, for the storage check (checkPackFiles). */
  private readonly packFiles: PackFilesCheck;
  private readonly durable: boolean;

  constructor(
    readonly gitdir: string,
    options: ObjectStoreOptions = {},
  ) {
    this.durable = options.durable ?? true;
    this.packs = new PackReader(join(gitdir, 'objects', 'pack'));
    this.packFiles = new PackFilesCheck(gitdir);
  }

  private loosePath(oid: string): string {
    return join(this.gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
  }

  /** Asynchronous only for the rare pack format isomorphic-git reads for us; see readSync. */
  async read(oid: string): Promise<{ type: ObjectType; content: Buffer }> {
    return this.readSync(oid) ?? (await this.readWithIsomorphicGit(oid));
  }

  /**
   * An object read synchronously, from a batch being written or the repository's files; null when it is in
   * none of them (readWithIsomorphicGit reads v1 packs). Objects are small
   * (the biggest, a directory of 10,000 flags, is ~0.4 MB): reading one costs microseconds, while an async
   * read costs four thread-pool round trips (open, stat, read, close), several times the CPU, and under load
   * milliseconds of waiting each. Callers that read thousands yield to the event loop between batches.
   */
  readSync(oid: string): { type: ObjectType; content: Buffer } | null {
    const unwritten = this.unwritten.get(oid)?.object;
    return unwritten ? { type: unwritten.type, content: flatContent(unwritten) } : this.readWrittenSync(oid);
  }

  /**
   * readSync of objects in the repository's files only: what a ref may be moved onto (another batch's object,
   * not yet in place, may never be if that batch fails).
   */
  readWrittenSync(oid: string): { type: ObjectType; content: Buffer } | null {
    try {
      // Packs first: a lookup in an open index costs a binary search, a missing loose file a thrown ENOENT.
      const packed = this.packs.readKnown(oid);
      if (packed) return packed;
      let deflated: Buffer;
      try {
        deflated = fs.readFileSync(this.loosePath(oid));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this.packs.read(oid);
        throw err;
      }
      return unframeObject(inflateSync(deflated));
    } catch (err) {
      // An object that is there but does not inflate, frame or read is corrupt: a fault, never a 500.
      throw corruptObject(oid, err);
    }
  }

  /**
   * Whether the object is in the repository's files now, read from disk (not from what is held in memory): a
   * loose file that inflates, or a pack file that holds it. Throws a read fault for one that is there but corrupt.
   */
  onDisk(oid: string): boolean {
    let deflated: Buffer;
    try {
      deflated = fs.readFileSync(this.loosePath(oid));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this.packs.onDisk(oid);
      throw corruptObject(oid, err);
    }
    try {
      unframeObject(inflateSync(deflated));
    } catch (err) {
      throw corruptObject(oid, err);
    }
    return true;
  }

  /** Packs our reader does not understand (index version 1, which git has not written since 2008). */
  private async readWithIsomorphicGit(oid: string): Promise<{ type: ObjectType; content: Buffer }> {
    if (this.packs.unsupported.size === 0) throw new ObjectNotFoundError(oid);
    try {
      const result = await git.readObject({ fs, gitdir: this.gitdir, oid, format: 'content', cache: this.packCache });
      return { type: result.type as ObjectType, content: Buffer.from(result.object as Uint8Array) };
    } catch (err) {
      if ((err as { code?: string }).code === 'NotFoundError') throw new ObjectNotFoundError(oid);
      throw err;
    }
  }

  async readTyped(oid: string, type: ObjectType): Promise<Buffer> {
    const object = await this.read(oid);
    if (object.type !== type) throw new StorageFaultError('read', `git object ${oid.slice(0, 12)} is a ${object.type}, not a ${type}`);
    return object.content;
  }

  /** A tree object's bytes, from the parsed-tree cache when it holds them (without parsing or caching it otherwise). */
  async readTreeBytes(oid: string): Promise<TreeBytes> {
    if (oid === EMPTY_TREE_OID) return TreeBytes.EMPTY;
    return this.trees.get(oid)?.content ?? TreeBytes.of(await this.readTyped(oid, 'tree'));
  }

  /** A tree's entries; parsed trees are cached by oid (objects never change), so treat them as read-only. */
  async readTree(oid: string): Promise<readonly TreeEntry[]> {
    return (await this.readTreeObject(oid)).entries;
  }

  /**
   * A tree's entries and, when serializing them gives back the same bytes (nearly always), its content:
   * what TreeWriter splices a changed entry into instead of serializing 10,000 entries again.
   */
  async readTreeObject(oid: string): Promise<CachedTree> {
    const cached = this.trees.get(oid);
    if (cached) return cached;
    const content = oid === EMPTY_TREE_OID ? Buffer.alloc(0) : await this.readTyped(oid, 'tree');
    const entries = parseOrFault(oid, () => parseTree(content));
    // serializeTree writes a directory's mode as 40000 (old git wrote 040000) and names as UTF-8, which
    // a name that is not valid UTF-8 (decoded with U+FFFD) does not survive: such trees are re-serialized.
    const canonical = entries.every((entry) => entry.mode !== '040000' && !entry.name.includes('\uFFFD'));
    const tree = canonical ? { entries, content: TreeBytes.of(content, entries) } : { entries };
    this.trees.set(oid, tree);
    return tree;
  }

  async readCommit(oid: string): Promise<CommitObject> {
    const cached = this.commits.get(oid);
    if (cached) return cached;
    const content = await this.readTyped(oid, 'commit');
    const commit = parseOrFault(oid, () => parseCommit(content));
    this.commits.set(oid, commit);
    return commit;
  }

  /**
   * Writes a commit's new objects durably: those already in the repository are only touched (as git does, so
   * that a `git gc` running beside us does not prune them as old and unreachable before the commit that needs
   * them lands); of the rest, one or two small ones are written as loose files, more as one pack and its index,
   * and big ones (over STORE_ABOVE_BYTES) as loose files. Either way each file is written to a temp file,
   * fsynced and renamed into place, so the ref, moved after, never points at a lost object, and a crash leaves
   * only temp files git ignores. Metadata calls are synchronous:
   * each takes microseconds, while the thread pool costs more CPU than the call; only the fsyncs, which wait
   * on the disk, run on the pool, in parallel.
   */
  async writeObjects(objects: readonly BatchObject[]): Promise<void> {
    try {
      const fresh = objects.filter((object) => !this.freshen(object.oid));
      // Big objects (a 10,000-flag directory's tree) stay loose: in a pack they would be hashed a second time
      // for its checksum, ~1 ms of the event loop at 0.4 MB, more than the one more file costs.
      const small = fresh.filter((object) => framedLength(object) <= STORE_ABOVE_BYTES);
      const packed = small.length > LOOSE_UP_TO ? small : [];
      const loose = packed.length > 0 ? fresh.filter((object) => framedLength(object) > STORE_ABOVE_BYTES) : fresh;
      // All settled before a failure is thrown: nothing is left writing after an aborted commit.
      const writes = await Promise.allSettled([
        ...loose.map((object) => this.writeLoose(object)),
        ...(packed.length > 0 ? [this.writePack(packed)] : []),
      ]);
      const failed = writes.find((write) => write.status === 'rejected');
      if (failed) throw failed.reason;
    } catch (err) {
      throw writeFault(err);
    }
  }

  /** True when the object is already here, after touching its file (loose object or pack) as git does. */
  private freshen(oid: string): boolean {
    const now = new Date();
    const pack = this.packs.locate(oid);
    const packFile = pack && join(this.gitdir, 'objects', 'pack', `${pack}.pack`);
    const files = packFile ? [packFile, this.loosePath(oid)] : [this.loosePath(oid)];
    for (const path of files) {
      try {
        const touch = () => fs.utimesSync(path, now, now);
        if (pack && path === packFile) this.packFiles.touching(pack, touch);
        else touch();
        return true;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // Best effort, as in git: an object file we may not touch is still there.
        if (code !== 'ENOENT' && code !== 'ENOTDIR') return true;
      }
    }
    return false;
  }

  private async writeLoose(object: BatchObject): Promise<void> {
    const { oid, header, content } = object;
    const dir = join(this.gitdir, 'objects', oid.slice(0, 2));
    // git fsck skips files named tmp_obj_*, so a crash mid-write leaves nothing it complains about.
    const tmp = join(dir, `tmp_obj_${randomBytes(8).toString('hex')}`);
    // A big object is stored, not deflated (see STORE_ABOVE_BYTES), and written from its pieces as they are:
    // a framed copy and its deflated copy would be two more 0.4 MB buffers for a 10,000-flag directory's tree.
    const data =
      framedLength(object) > STORE_ABOVE_BYTES
        ? storedZlib([header, ...contentPieces(content)])
        : [deflateObject(Buffer.concat([header, flatContent(object)]))];
    await this.writeDurably([{ dir, tmp, data }]);
    fs.renameSync(tmp, this.loosePath(oid));
  }

  /**
   * One pack of `objects` and its index, as git writes them: both fsynced, then the pack renamed into place
   * and the index after it (git reads a pack only through its index). The reader opens it at once.
   */
  private async writePack(objects: readonly BatchObject[]): Promise<void> {
    const { checksum, pack, idx } = buildPack(objects.map((object) => ({ ...object, content: flatContent(object) })));
    const dir = join(this.gitdir, 'objects', 'pack');
    const suffix = randomBytes(8).toString('hex');
    // git removes leftover tmp_pack_* and tmp_idx_* files (git prune), and reads neither as a pack.
    const files = [
      { dir, tmp: join(dir, `tmp_pack_${suffix}`), data: [pack] },
      { dir, tmp: join(dir, `tmp_idx_${suffix}`), data: [idx] },
    ];
    await this.writeDurably(files);
    const name = `pack-${checksum}`;
    fs.renameSync(files[0].tmp, join(dir, `${name}.pack`));
    fs.renameSync(files[1].tmp, join(dir, `${name}.idx`));
    this.packs.add(name);
    this.packFiles.written(name);
  }

  /** Writes each file (read-only, as git leaves objects), fsyncs them together, closes them; removes them on failure. */
  private async writeDurably(files: ReadonlyArray<{ dir: string; tmp: string; data: readonly Buffer[] }>): Promise<void> {
    const fds: number[] = [];
    try {
      for (const file of files) {
        fds.push(openCreating(file.dir, file.tmp));
        for (const piece of file.data) writeFully(fds[fds.length - 1], piece);
      }
      if (this.durable) await Promise.all(fds.map((fd) => fsync(fd)));
    } catch (err) {
      for (const fd of fds) fs.closeSync(fd);
      for (const file of files) fs.rmSync(file.tmp, { force: true });
      throw err;
    }
    for (const fd of fds) fs.closeSync(fd);
  }

  /** The full oid of an abbreviated one (4 to 39 hex digits), loose or packed; null when none or several match. */
  async expandOid(prefix: string): Promise<{ oid: string } | { ambiguous: string[] } | null> {
    const found = new Set(this.packs.matching(prefix));
    const dir = join(this.gitdir, 'objects', prefix.slice(0, 2));
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const oid = prefix.slice(0, 2) + name;
      if (oid.length === 40 && oid.startsWith(prefix)) found.add(oid);
    }
    if (found.size === 0) return null;
    return found.size === 1 ? { oid: [...found][0] } : { ambiguous: [...found].sort() };
  }

  /** Writes objects in parallel; `done` resolves once all are on disk. See WriteBatch. */
  batch(): WriteBatch {
    return new WriteBatch(this);
  }

  /**
   * The service's housekeeping repacked the repository: let go of removed packs (their open files hold disk
   * space), which are no fault of the files on disk either.
   */
  packsChanged(): void {
    this.packs.refresh();
    this.packFiles.forgetRemoved();
  }

  /**
   * Whether the pack files still hold what they held when written or first seen (pack-files-check.ts): the
   * reader serves packs from memory, where a pack damaged, truncated or removed on disk reads on unnoticed.
   */
  checkPackFiles(): Promise<StorageFaultError | undefined> {
    return this.packFiles.check();
  }

  close(): void {
    this.packs.close();
  }

  /** An object of a batch, readable from here until releaseUnwritten (see `unwritten`). */
  holdUnwritten(object: BatchObject): void {
    const held = this.unwritten.get(object.oid);
    if (held) held.holds++;
    else this.unwritten.set(object.oid, { object, holds: 1 });
  }

  releaseUnwritten(objects: Iterable<BatchObject>): void {
    for (const { oid } of objects) {
      const held = this.unwritten.get(oid);
      if (held && --held.holds === 0) this.unwritten.delete(oid);
    }
  }

  /** Records a tree we built ourselves (`content` is serializeTree(entries)) so reading it back costs nothing. */
  rememberTree(oid: string, entries: readonly TreeEntry[], content: TreeBytes): void {
    this.trees.set(oid, { entries, content });
  }

  rememberCommit(oid: string, commit: CommitObject): void {
    this.commits.set(oid, commit);
  }
}

function parseOrFault<T>(oid: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw corruptObject(oid, err);
  }
}

/**
 * Opens a new read-only file (as git leaves objects), creating its directory when git removed it. A repack
 * running beside us removes fan-out directories it emptied, possibly again right after we created one: try
 * again, as git's own object writer does.
 */
function openCreating(dir: string, file: string): number {
  for (let attempt = 1; ; attempt++) {
    try {
      return fs.openSync(file, 'wx', 0o444);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 10) throw err;
      fs.mkdirSync(dir, { recursive: true });
    }
  }
}

/** Up to this many new small objects are written as loose files; more as a pack (two files). */
const LOOSE_UP_TO = 2;

/** Pending objects above this many bytes are written without waiting for the flush: a big import stays bounded. */
const PENDING_BYTES = 32 * 1024 * 1024;

export interface BatchObject {
  oid: string;
  type: ObjectType;
  /** `type len\0`: header then content is what a loose object holds (deflated). */
  header: Buffer;
  /** A big tree's bytes are pieces of earlier versions' (TreeBytes), copied into one buffer only when read. */
  content: Buffer | TreeBytes;
}

function framedLength(object: BatchObject): number {
  return object.header.length + object.content.length;
}

function flatContent(object: BatchObject): Buffer {
  return object.content instanceof TreeBytes ? object.content.flat() : object.content;
}

function contentPieces(content: Buffer | TreeBytes): Buffer[] {
  return content instanceof TreeBytes ? content.pieces() : [content];
}

/**
 * A commit's objects. `write` hashes at once and returns the oid, so trees can name their children before
 * those are on disk; nothing may reference the batch (the ref) before `done`.
 *
 * Objects are collected until `flush` (the commit's objects are all known then) and written together, as one
 * pack when there are more than two (ObjectStore.writeObjects): a commit then creates two files, not one per
 * object, each creation and rename a wait on the file system's journal when other processes fsync. Objects
 * written after the flush (the next commits of a series) are written at `done`, or as soon as they come to
 * PENDING_BYTES.
 */
export class WriteBatch {
  private readonly pending = new Map<string, BatchObject>();
  private pendingBytes = 0;
  private readonly written = new Set<string>();
  private readonly writes: Promise<void>[] = [];
  private flushed = false;

  constructor(private readonly store: ObjectStore) {}

  /** The object's oid; `content` is kept as it is until written, so it must not change after this call. */
  write(type: ObjectType, content: Buffer | TreeBytes): string {
    // Hashed and written from the content itself: a copy framed with its header would be another 0.4 MB for
    // a 10,000-flag directory's tree, each commit.
    const header = objectHeader(type, content.length);
    const oid = hashObjectParts(header, ...contentPieces(content));
    if (this.written.has(oid) || this.pending.has(oid)) return oid;
    const object = { oid, type, header, content };
    this.pending.set(oid, object);
    this.store.holdUnwritten(object);
    this.pendingBytes += framedLength(object);
    if (this.pendingBytes > PENDING_BYTES) this.writePending();
    return oid;
  }

  /** Starts writing the objects written so far (the first time; later ones wait for `done`). */
  flush(): void {
    if (this.flushed) return;
    this.flushed = true;
    this.writePending();
  }

  async done(): Promise<void> {
    this.flushed = true;
    this.writePending();
    await Promise.all(this.writes);
  }

  /**
   * Waits for every write under way to finish, failed or not: nothing is left writing after an aborted commit.
   * Objects never written (the change was refused) are no longer readable.
   */
  async settled(): Promise<void> {
    await Promise.allSettled(this.writes);
    this.store.releaseUnwritten(this.pending.values());
    this.pending.clear();
    this.pendingBytes = 0;
  }

  private writePending(): void {
    if (this.pending.size === 0) return;
    const objects = [...this.pending.values()];
    for (const object of objects) this.written.add(object.oid);
    this.pending.clear();
    this.pendingBytes = 0;
    // Readable from memory until the write ends; then from their files, or, when it failed, not at all (a failed
    // commit's objects are referred to by nothing).
    const writing = this.store.writeObjects(objects).finally(() => this.store.releaseUnwritten(objects));
    // Failures surface in done(); this only keeps an early one from being reported as unhandled.
    writing.catch(() => {});
    this.writes.push(writing);
  }
}

/** writeSync may write fewer bytes than asked for. */
function writeFully(fd: number, data: Buffer): void {
  let done = 0;
  while (done < data.length) done += fs.writeSync(fd, data, done, data.length - done);
}
