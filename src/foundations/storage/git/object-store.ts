import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import git from 'isomorphic-git';
import { StorageFaultError } from '../../errors/kinds.js';
import { fsync } from './fsync.js';
import {
  type CommitObject,
  EMPTY_TREE_OID,
  frameObject,
  hashFramed,
  type ObjectType,
  parseCommit,
  parseTree,
  type TreeEntry,
  unframeObject,
} from './git-objects.js';
import { corruptObject, writeFault } from './io-faults.js';
import { createLimiter } from './limiter.js';
import { Lru } from './lru.js';
import { PackReader } from './pack-reader.js';

/** An object the repository should have and does not: a storage fault (a revision a caller names is theirs to get right). */
export class ObjectNotFoundError extends StorageFaultError {
  constructor(readonly oid: string) {
    super('read', `git object ${oid.slice(0, 12)} is missing`);
  }
}

/** A parsed tree, with its serialized content when that is exactly what serializeTree(entries) writes. */
export interface CachedTree {
  entries: readonly TreeEntry[];
  content?: Buffer;
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
   * their bytes too (for spliceTree), ~40 bytes an entry on top of the parsed entry.
   */
  private readonly trees = new Lru<string, CachedTree>(200_000, (tree) => tree.entries.length + 1);
  private readonly commits = new Lru<string, CommitObject>(10_000);
  /** isomorphic-git's cache of pack indexes and packs; shared across reads so a pack is loaded once. */
  private readonly packCache = {};
  private readonly packs: PackReader;
  private readonly durable: boolean;

  constructor(
    readonly gitdir: string,
    options: ObjectStoreOptions = {},
  ) {
    this.durable = options.durable ?? true;
    this.packs = new PackReader(join(gitdir, 'objects', 'pack'));
  }

  private loosePath(oid: string): string {
    return join(this.gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
  }

  /** Asynchronous only for the rare pack format isomorphic-git reads for us; see readSync. */
  async read(oid: string): Promise<{ type: ObjectType; content: Buffer }> {
    return this.readSync(oid) ?? (await this.readWithIsomorphicGit(oid));
  }

  /**
   * An object read synchronously; null when it is in neither a loose file nor a v2 pack. Objects are small
   * (the biggest, a directory of 10,000 flags, is ~0.4 MB): reading one costs microseconds, while an async
   * read costs four thread-pool round trips (open, stat, read, close), several times the CPU, and under load
   * milliseconds of waiting each. Callers that read thousands yield to the event loop between batches.
   */
  readSync(oid: string): { type: ObjectType; content: Buffer } | null {
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
  async readTreeBytes(oid: string): Promise<Buffer> {
    if (oid === EMPTY_TREE_OID) return Buffer.alloc(0);
    return this.trees.get(oid)?.content ?? (await this.readTyped(oid, 'tree'));
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
    const tree = canonical ? { entries, content } : { entries };
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
   * Writes one object atomically (temp file, fsync, rename); one already present is not rewritten.
   * Metadata calls (exists, open, write, close, rename) are synchronous: each takes microseconds, while
   * going through the thread pool costs more CPU than the call. Only the fsync, which waits on the disk,
   * runs on the pool, so the objects of one commit are flushed in parallel. The fsync waits for `flushing`:
   * see WriteBatch.flush.
   */
  async writeFramed(oid: string, framed: Buffer, flushing: Promise<void> = Promise.resolve()): Promise<void> {
    try {
      await this.writeLoose(oid, framed, flushing);
    } catch (err) {
      throw writeFault(err);
    }
  }

  private async writeLoose(oid: string, framed: Buffer, flushing: Promise<void>): Promise<void> {
    const path = this.loosePath(oid);
    if (fs.existsSync(path)) {
      // As git does: touch it, so a concurrent `git gc` does not prune it as old and unreachable before
      // the commit that needs it lands.
      const now = new Date();
      try {
        fs.utimesSync(path, now, now);
      } catch {
        // Best effort, as in git: an object we may not touch is still there.
      }
      return;
    }
    const dir = join(this.gitdir, 'objects', oid.slice(0, 2));
    // git fsck skips files named tmp_obj_*, so a crash mid-write leaves nothing it complains about.
    const tmp = join(dir, `tmp_obj_${randomBytes(8).toString('hex')}`);
    const fd = openCreating(dir, tmp);
    try {
      fs.writeSync(fd, deflateSync(framed, { level: framed.length > STORE_ABOVE_BYTES ? 0 : 1 }));
      await flushing;
      if (this.durable) await fsync(fd);
    } catch (err) {
      fs.closeSync(fd);
      fs.rmSync(tmp, { force: true });
      throw err;
    }
    fs.closeSync(fd);
    fs.renameSync(tmp, path);
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

  /** Someone repacked the repository: let go of removed packs (their open files hold disk space). */
  packsChanged(): void {
    this.packs.refresh();
  }

  close(): void {
    this.packs.close();
  }

  /** Records a tree we built ourselves (`content` is serializeTree(entries)) so reading it back costs nothing. */
  rememberTree(oid: string, entries: readonly TreeEntry[], content: Buffer): void {
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

/**
 * Objects bigger than this are written as stored (uncompressed) zlib blocks. Each commit in a big environment
 * writes a new copy of its directory's tree (~0.4 MB at 10,000 flags, mostly 20-byte ids that do not compress):
 * deflating it took ~6 ms of the event loop per commit, for 40 % fewer bytes that the next repack
 * (housekeeping.ts) turns into deltas anyway. Git reads stored blocks like any other.
 */
const STORE_ABOVE_BYTES = 64 * 1024;

/** Writes at once per batch: keeps the thread pool busy with fsyncs without exhausting file descriptors. */
const BATCH_CONCURRENCY = 16;

/**
 * A commit's objects, written in parallel. `write` hashes at once and returns the oid, so trees can name
 * their children before those are on disk; nothing may reference the batch (the ref) before `done`.
 *
 * Each object's temp file is created and written at once, but fsynced only from `flush` on (or `done`),
 * all together: a commit's file creations then do not queue behind journal commits forced by the fsyncs of
 * its own first objects, and its fsyncs can share journal commits. The ref still moves only once every
 * object is fsynced and renamed. The first BATCH_CONCURRENCY objects wait for the flush; more (an import)
 * wait for their turn and are flushed as they come.
 */
export class WriteBatch {
  private readonly pending: Promise<unknown>[] = [];
  private readonly limit = createLimiter(BATCH_CONCURRENCY);
  private startFlush!: () => void;
  private readonly flushing = new Promise<void>((resolve) => {
    this.startFlush = resolve;
  });

  constructor(private readonly store: ObjectStore) {}

  write(type: ObjectType, content: Buffer): string {
    const framed = frameObject(type, content);
    const oid = hashFramed(framed);
    const writing = this.limit(() => this.store.writeFramed(oid, framed, this.flushing));
    // Failures surface in done(); this only keeps an early one from being reported as unhandled.
    writing.catch(() => {});
    this.pending.push(writing);
    return oid;
  }

  /** Starts making the objects written so far (and any written after) durable. */
  flush(): void {
    this.startFlush();
  }

  async done(): Promise<void> {
    this.flush();
    await Promise.all(this.pending);
  }

  /** Waits for every write to finish, failed or not: nothing is left writing after an aborted commit. */
  async settled(): Promise<void> {
    this.flush();
    await Promise.allSettled(this.pending);
  }
}
