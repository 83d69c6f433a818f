import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  readJsonStateFile,
  StateFileError,
  stateWriteFault,
  withStateFileLock,
  writeJsonStateFile,
} from '../../state-files/state-files.js';

export interface JsonStateFileOptions<T> {
  /** The content when the file does not exist yet (`data` undefined), else the file's JSON checked: throw naming `file` when it is not what we write. */
  parse(data: unknown, file: string): T;
  /**
   * Other processes write the file too (`flagops user add` beside the service): a read first looks whether the
   * file changed on disk, and a change holds `<file>.lock` while it reads, changes and writes.
   */
  otherProcesses?: boolean;
  /** Added to the error for a file that is not JSON: what the operator can do about it. */
  hint?: string;
}

interface Queued {
  change: (draft: unknown) => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** What every JsonStateFile of one path in this process shares: the order of writes, and who hears them. */
interface SharedFile {
  /** Raised by every write, so an instance knows its copy is older than the file. */
  version: number;
  writes: Promise<void>;
  /** Changes asked for while no write has started: the next write makes them all. */
  queue: Queued[];
  listeners: Set<{ owner: JsonStateFile<unknown>; listener: () => void }>;
}

const sharedFiles = new Map<string, SharedFile>();

interface Stamp {
  mtimeMs: number;
  size: number;
  ino: number;
}

/**
 * One JSON state file read and changed whole, as keys.json, users.json, sessions.json and triggers.json are:
 * reads come from memory once read; changes run one write at a time per file in this process, each on the
 * file's current content, and resolve once the file holds them (atomically, mode 0600). Changes asked for while
 * a write waits for its turn share that write. Instances on the same file (two states opened on one data
 * directory in one process) share the order of writes; what one writes is announced to the others' `onChange`
 * listeners, and their next read reads the file again.
 */
export class JsonStateFile<T> {
  private content: T | undefined;
  /** The shared version this instance's copy is of. */
  private seen = -1;
  private stamp: Stamp | null = null;
  private readonly shared: SharedFile;

  constructor(
    readonly file: string,
    private readonly options: JsonStateFileOptions<T>,
  ) {
    const key = path.resolve(file);
    let shared = sharedFiles.get(key);
    if (!shared) {
      shared = { version: 0, writes: Promise.resolve(), queue: [], listeners: new Set() };
      sharedFiles.set(key, shared);
    }
    this.shared = shared;
  }

  /** The current content. Callers must not change it: they copy what they keep or hand out. */
  async read(): Promise<T> {
    if (this.content !== undefined && this.seen === this.shared.version && !(await this.changedOnDisk())) return this.content;
    return this.load();
  }

  /**
   * Runs `change` on a copy of the current content and writes the copy when it differs; resolves to what
   * `change` returned once the file holds it. `change` must throw before it changes anything: a change that
   * throws is left out of the write, and only its caller sees the error.
   */
  change<R>(change: (draft: T) => R): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const shared = this.shared;
      shared.queue.push({ change: change as (draft: unknown) => unknown, resolve: resolve as (value: unknown) => void, reject });
      if (shared.queue.length > 1) return; // the write that is waiting makes this change too
      const write = () => this.writeQueued();
      shared.writes = shared.writes.then(write, write);
    });
  }

  /** Calls `listener` after each write of the file by another instance; returns how to stop. */
  onChange(listener: () => void): () => void {
    const entry = { owner: this as JsonStateFile<unknown>, listener };
    this.shared.listeners.add(entry);
    return () => this.shared.listeners.delete(entry);
  }

  private async writeQueued(): Promise<void> {
    const queued = this.shared.queue.splice(0);
    const apply = async () => {
      const current = await this.read();
      const draft = structuredClone(current);
      const done: Array<{ item: Queued; result: unknown }> = [];
      for (const item of queued) {
        try {
          done.push({ item, result: item.change(draft) });
        } catch (err) {
          item.reject(err);
        }
      }
      if (JSON.stringify(draft) !== JSON.stringify(current)) {
        await writeJsonStateFile(this.file, draft);
        this.content = draft;
        this.seen = ++this.shared.version;
        if (this.options.otherProcesses) this.stamp = await stampOf(this.file);
        for (const { owner, listener } of this.shared.listeners) if (owner !== this) listener();
      }
      return done;
    };
    try {
      await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 }).catch((err) =>
        Promise.reject(stateWriteFault(this.file, err)),
      );
      const done = this.options.otherProcesses ? await withStateFileLock(this.file, apply) : await apply();
      for (const { item, result } of done) item.resolve(result);
    } catch (err) {
      for (const item of queued) item.reject(err); // those already settled ignore it
    }
  }

  private async load(): Promise<T> {
    const stamp = this.options.otherProcesses ? await stampOf(this.file) : null;
    const version = this.shared.version;
    const data = await readJsonStateFile(this.file, this.options.hint);
    let content: T;
    try {
      content = this.options.parse(data, this.file);
    } catch (err) {
      throw new StateFileError(`${(err as Error).message}${this.options.hint ?? ''}`);
    }
    this.content = content;
    this.seen = version;
    this.stamp = stamp;
    return content;
  }

  private async changedOnDisk(): Promise<boolean> {
    if (!this.options.otherProcesses) return false;
    return !sameStamp(await stampOf(this.file), this.stamp);
  }
}

async function stampOf(file: string): Promise<Stamp | null> {
  try {
    const s = await stat(file);
    return { mtimeMs: s.mtimeMs, size: s.size, ino: s.ino };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function sameStamp(a: Stamp | null, b: Stamp | null): boolean {
  return a === b || (a !== null && b !== null && a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino);
}
