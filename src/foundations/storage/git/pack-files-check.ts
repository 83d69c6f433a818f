import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { StorageFaultError } from '../../errors/kinds.js';
import { gitRun } from './git-cli.js';

/** The longest the walk of every ref may take that decides whether a removed pack's objects were needed. */
const WALK_TIMEOUT_MS = 60_000;

/** What a stat says of a file that changes when its bytes do: a copy, a rewrite, a truncation, a write in place. */
interface FileStamp {
  ino: number;
  size: number;
  mtimeMs: number;
}

interface KnownPack {
  pack: FileStamp;
  idx: FileStamp;
  /** The ids its index lists, 20 bytes each, sorted: whether other files hold them once the pack is gone. */
  oids: Buffer;
  /**
   * Whether its checksums were found to match its bytes (or the service wrote it). A pack found on disk (at
   * start, or put there by a push or a repack) is not taken as good before that: nothing else may ever read the
   * object that is damaged.
   */
  verified: boolean;
  /** Files a verification found damaged, and what it found: not hashed again until they change. */
  damaged?: { pack: FileStamp; idx: FileStamp; fault: string };
  /** Once removed with objects no other file holds: the fault when a ref reaches one of them, null when none does. */
  gone?: string | null;
}

/**
 * The pack files of a repository as they were when this process wrote or first saw them, looked at again by
 * the storage check: a pack the service holds in memory goes on serving reads after its file was damaged,
 * truncated or removed, while a restart could read none of it. A pack found on disk (at start, or written by
 * a push or a repack) is verified at the first look (its checksum trailer, and its index's), once, and so is
 * one whose file changed since, taken as it is when whole (git touches a pack to keep its objects fresh); a
 * removed one is fine when every object it held is in another file (a repack), a fault otherwise. Packs the
 * service writes are taken as written. Loose objects are not covered here: each is read from its file at every
 * read that is not served from memory.
 */
export class PackFilesCheck {
  private readonly known = new Map<string, KnownPack>();

  /** Remembers the packs there now, those the service starts on, to be verified at the first look. */
  constructor(private readonly gitdir: string) {
    for (const name of this.listed()) this.remember(name, false);
  }

  private get packDir(): string {
    return join(this.gitdir, 'objects', 'pack');
  }

  /** The first fault the pack files have now, or undefined. */
  async check(): Promise<StorageFaultError | undefined> {
    const present = this.listed();
    for (const name of present) if (!this.known.has(name)) this.remember(name, false);
    let fault: StorageFaultError | undefined;
    for (const [name, known] of this.known) {
      const found = present.has(name) ? await this.changed(name, known) : await this.removed(name, known, present);
      fault ??= found;
    }
    return fault;
  }

  /**
   * Forgets packs removed from the directory without looking for their objects: the service's own housekeeping
   * replaced them, and `git gc` drops unreachable objects too.
   */
  forgetRemoved(): void {
    const present = this.listed();
    for (const name of this.known.keys()) if (!present.has(name)) this.known.delete(name);
  }

  /**
   * Runs `touch` on pack `name` (which sets its mtime) and restamps the pack, when it was unchanged before:
   * the service's own freshening is no change to verify.
   */
  touching(name: string, touch: () => void): void {
    const known = this.known.get(name);
    const before = known && stampOf(join(this.packDir, `${name}.pack`));
    touch();
    if (!known || !before || !sameStamp(before, known.pack)) return;
    known.pack = stampOf(join(this.packDir, `${name}.pack`)) ?? known.pack;
  }

  /** Remembers a pack the service just wrote, as it wrote it. */
  written(name: string): void {
    this.remember(name, true);
  }

  /** Packs with both files in the directory now. */
  private listed(): Set<string> {
    let names: string[];
    try {
      names = readdirSync(this.packDir);
    } catch {
      return new Set();
    }
    const files = new Set(names);
    return new Set(
      names.filter((n) => n.startsWith('pack-') && n.endsWith('.idx') && files.has(`${n.slice(0, -4)}.pack`)).map((n) => n.slice(0, -4)),
    );
  }

  private remember(name: string, verified: boolean): void {
    const base = join(this.packDir, name);
    const pack = stampOf(`${base}.pack`);
    const idx = stampOf(`${base}.idx`);
    if (!pack || !idx) return;
    let index: Buffer | undefined;
    try {
      index = readUnlessGone(`${base}.idx`);
    } catch {
      index = Buffer.alloc(0); // unreadable: its verification says how
    }
    // Gone since it was listed (a repack): the next look finds the pack that holds its objects.
    if (index === undefined) return;
    let oids: Buffer;
    try {
      oids = indexedOids(index);
    } catch {
      // A damaged index lists nothing to look for once the pack is gone; its verification reports it.
      oids = Buffer.alloc(0);
    }
    this.known.set(name, { pack, idx, oids, verified });
  }

  private async changed(name: string, known: KnownPack): Promise<StorageFaultError | undefined> {
    const base = join(this.packDir, name);
    const pack = stampOf(`${base}.pack`);
    const idx = stampOf(`${base}.idx`);
    // Removed since the listing: a repack, most likely; the next look sees where its objects went.
    if (!pack || !idx) return undefined;
    if (known.verified && sameStamp(pack, known.pack) && sameStamp(idx, known.idx)) return undefined;
    const { damaged } = known;
    if (damaged && sameStamp(pack, damaged.pack) && sameStamp(idx, damaged.idx)) return new StorageFaultError('read', damaged.fault);
    // The index is read once, and what was verified is what is remembered: a repack may remove the files any
    // time from here, which is no damage (the next look sees where their objects went).
    const index = readUnlessGone(`${base}.idx`);
    if (index === undefined) return undefined;
    const fault = await verifyPack(`${base}.pack`, index);
    if (fault === undefined) {
      // Whole: as found, touched, or rewritten with the same objects (a repack of the same pack).
      this.known.set(name, { pack, idx, oids: indexedOids(index), verified: true });
      return undefined;
    }
    // Rewritten or removed while it was read (a repack that began meanwhile, on a busy machine): not damage; the
    // next look sees how the repack left it.
    const packNow = stampOf(`${base}.pack`);
    const idxNow = stampOf(`${base}.idx`);
    if (!packNow || !idxNow || !sameStamp(packNow, pack) || !sameStamp(idxNow, idx)) return undefined;
    const words = `pack file objects/pack/${name}.${fault.file} is damaged (${fault.what})`;
    known.damaged = { pack, idx, fault: words };
    return new StorageFaultError('read', words);
  }

  private async removed(name: string, known: KnownPack, present: ReadonlySet<string>): Promise<StorageFaultError | undefined> {
    const others = [...present].flatMap((other) => {
      const pack = this.known.get(other);
      return pack ? [pack.oids] : [];
    });
    const missing: string[] = [];
    for (let at = 0; at < known.oids.length; at += 20) {
      const oid = known.oids.subarray(at, at + 20);
      if (others.some((oids) => holds(oids, oid))) continue;
      const hex = oid.toString('hex');
      if (!existsSync(join(this.gitdir, 'objects', hex.slice(0, 2), hex.slice(2)))) missing.push(hex);
    }
    // Objects no other file holds are a fault only when a ref reaches them: a repack may leave out what nothing
    // references (a commit a rebuild replaced). Asked of git once per removed pack, as it walks every ref.
    if (missing.length > 0) {
      known.gone ??= await this.reachedAmong(missing, name);
      if (known.gone !== null) return new StorageFaultError('read', known.gone);
    }
    // Its objects are elsewhere, or nothing needs them: a repack replaced it.
    this.known.delete(name);
    return undefined;
  }

  /** The fault when a ref reaches one of the `missing` objects (or git cannot walk the refs), null when none does. */
  private async reachedAmong(missing: readonly string[], name: string): Promise<string | null> {
    const fault = (hex: string) => `git object ${hex.slice(0, 12)} is missing (pack file objects/pack/${name}.pack was removed)`;
    const walked = await gitRun(this.gitdir, ['rev-list', '--objects', '--no-object-names', '--missing=print', '--all'], {
      timeoutMs: WALK_TIMEOUT_MS,
    });
    // A missing commit stops the walk: as much a fault as a missing tree or blob it prints.
    if (walked.code !== 0) return fault(missing[0]);
    const absent = new Set(walked.stdout.split('\n').flatMap((line) => (line.startsWith('?') ? [line.slice(1).trim()] : [])));
    const reached = missing.find((hex) => absent.has(hex));
    return reached === undefined ? null : fault(reached);
  }
}

function stampOf(file: string): FileStamp | undefined {
  try {
    const { ino, size, mtimeMs } = statSync(file);
    return { ino, size, mtimeMs };
  } catch {
    return undefined;
  }
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** The object ids an index lists (version 2, or the old version 1), 20 bytes each in their sorted order. */
function indexedOids(idx: Buffer): Buffer {
  const v2 = idx.length >= 8 && idx.readUInt32BE(0) === 0xff744f63;
  if (v2 && idx.readUInt32BE(4) !== 2) return Buffer.alloc(0);
  const fanoutAt = v2 ? 8 : 0;
  if (idx.length < fanoutAt + 1024) throw new Error('pack index ended early');
  const count = idx.readUInt32BE(fanoutAt + 255 * 4);
  const at = fanoutAt + 1024;
  if (v2) return Buffer.from(idx.subarray(at, at + count * 20));
  const oids = Buffer.alloc(count * 20);
  for (let i = 0; i < count; i++) idx.copy(oids, i * 20, at + i * 24 + 4, at + i * 24 + 24);
  return oids;
}

/** Whether the sorted ids `oids` (20 bytes each) include `oid`. */
function holds(oids: Buffer, oid: Buffer): boolean {
  let lo = 0;
  let hi = oids.length / 20;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const order = oids.compare(oid, 0, 20, mid * 20, mid * 20 + 20);
    if (order === 0) return true;
    if (order < 0) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/**
 * What is wrong with a pack's files, or undefined: each ends with the SHA-1 of what comes before it, and the
 * index holds the pack's before its own. A write in place, a truncation or a file of zeros shows. Read as a
 * stream: a big pack's hashing does not hold the event loop.
 */
async function verifyPack(packFile: string, index: Buffer): Promise<{ file: 'pack' | 'idx'; what: string } | undefined> {
  const pack = await trailerCheck(packFile);
  if (pack.what) return { file: 'pack', what: pack.what };
  const idx = indexTrailerCheck(index);
  if (idx.what) return { file: 'idx', what: idx.what };
  if (!idx.before.subarray(-20).equals(pack.trailer)) return { file: 'idx', what: "it names another pack's checksum" };
  return undefined;
}

/** trailerCheck of an index read whole (an index is small: 28 bytes an object). */
function indexTrailerCheck(index: Buffer): { what?: string; trailer: Buffer; before: Buffer } {
  if (index.length < 32)
    return { what: index.length === 0 ? 'it is empty' : 'it is truncated', trailer: Buffer.alloc(0), before: Buffer.alloc(0) };
  const trailer = index.subarray(index.length - 20);
  const before = index.subarray(index.length - 40, index.length - 20);
  if (
    !createHash('sha1')
      .update(index.subarray(0, index.length - 20))
      .digest()
      .equals(trailer)
  )
    return { what: 'its checksum does not match its bytes', trailer, before };
  return { trailer, before };
}

/** The file's bytes, or undefined when it is gone (removed by a repack since it was listed). */
function readUnlessGone(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** A file's checksum trailer against its bytes, and (for an index) the 20 bytes before the trailer. */
async function trailerCheck(file: string): Promise<{ what?: string; trailer: Buffer; before: Buffer }> {
  const hash = createHash('sha1');
  // The last 40 bytes seen: the trailer, and an index's pack checksum before it.
  let tail = Buffer.alloc(0);
  let size = 0;
  try {
    for await (const chunk of createReadStream(file)) {
      const bytes = chunk as Buffer;
      size += bytes.length;
      const joined = Buffer.concat([tail, bytes]);
      const keep = Math.min(40, joined.length);
      hash.update(joined.subarray(0, joined.length - keep));
      tail = Buffer.from(joined.subarray(joined.length - keep));
    }
  } catch (err) {
    return {
      what: `it cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      trailer: Buffer.alloc(0),
      before: Buffer.alloc(0),
    };
  }
  if (size < 32) return { what: size === 0 ? 'it is empty' : 'it is truncated', trailer: Buffer.alloc(0), before: Buffer.alloc(0) };
  const trailer = tail.subarray(tail.length - 20);
  hash.update(tail.subarray(0, tail.length - 20));
  if (!hash.digest().equals(trailer))
    return { what: 'its checksum does not match its bytes', trailer, before: tail.subarray(0, tail.length - 20) };
  return { trailer, before: tail.subarray(0, tail.length - 20) };
}
