import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import type { Logger } from '../../log/logger.js';
import { loopTurn } from '../../process/loop-turns.js';
import type { ParsedFile } from '../../repository/parsed-file.js';
import type { ValidationIssue } from '../../validation/issue.js';
import { type DirNode, deepFreeze, type FileNode } from './tree-reader.js';

/** Bump when the file's layout changes; parser changes are caught by the fingerprint. */
const FORMAT = 1;
/** Under the gitdir: every cache of what is derived from the repository's objects. */
export const PARSE_CACHE_DIR = 'flagops-cache';
const CACHE_FILE = 'parsed-projects.jsonl';
/** A temp file this old was left by a process that died while saving. */
const STALE_TEMP_MS = 60 * 60 * 1000;
/** Files per line: each line is parsed or serialized in one go, between which the event loop runs. */
const FILES_PER_LINE = 1000;

/**
 * After a header line, one line per directory, parents first, each followed by lines of its files in tree
 * order. A directory's oid is '' when something below it was left out (see encode).
 */
type Line =
  | ['dir', path: string, oid: string]
  | ['files', dir: string, names: string[], oids: string[], files: Array<ParsedFile | null>, issues: ValidationIssue[][]];

interface Header {
  format: number;
  fingerprint: string;
  crc32: number;
}

/**
 * The parsed `projects/` directory read last, saved under the repository's gitdir so that a restart does not
 * parse 40,000 files again: StateLoader hands it to TreeReader as the previous version of `projects/`, and
 * TreeReader reuses from it only what has the same tree or blob oid. So it can never serve a file other than
 * the one committed; what could make it wrong is a different parser, and the fingerprint covers that: every
 * source file of repository/, validation/ and model/, the schemas, and the versions of yaml, ajv and node. A
 * file that is damaged, truncated or of another fingerprint is ignored (and replaced at the next save).
 */
export class ParseCache {
  private readonly path: string;
  private saving: Promise<void> | undefined;
  private closed = false;

  private constructor(
    private readonly gitdir: string,
    private readonly fingerprint: string,
    private readonly logger: Logger,
  ) {
    this.path = join(gitdir, PARSE_CACHE_DIR, CACHE_FILE);
  }

  /** Undefined when the parser's sources cannot be found to fingerprint (a bundled build): no cache then. */
  static open(gitdir: string, logger: Logger): ParseCache | undefined {
    const fingerprint = parserFingerprint();
    return fingerprint === undefined ? undefined : new ParseCache(gitdir, fingerprint, logger);
  }

  /** The directory saved last, or undefined: none, another parser's, or damaged. */
  async load(): Promise<DirNode | undefined> {
    let text: string;
    try {
      // One read of a few MB: cheaper synchronous than through the thread pool, and over in milliseconds.
      text = fs.readFileSync(this.path, 'utf8');
    } catch {
      return undefined;
    }
    try {
      const newline = text.indexOf('\n');
      const header = JSON.parse(text.slice(0, newline)) as Header;
      if (header.format !== FORMAT || header.fingerprint !== this.fingerprint) return undefined;
      const body = text.slice(newline + 1);
      if (crc32(body) !== header.crc32) throw new Error('checksum mismatch');
      return await decode(body.split('\n'));
    } catch (err) {
      this.logger.warn('ignoring a damaged parse cache', { path: this.path, err });
      return undefined;
    }
  }

  /** Saves `dir` in the background (at most one save at a time; a save asked for meanwhile is dropped). */
  save(dir: DirNode): void {
    if (this.saving || this.closed) return;
    this.saving = this.write(dir)
      .catch((err) => this.logger.warn('saving the parse cache failed', { path: this.path, err }))
      .finally(() => {
        this.saving = undefined;
      });
  }

  /** Lets a save in flight finish (nothing writes into the gitdir after the repository is closed). */
  async close(): Promise<void> {
    this.closed = true;
    await this.saving;
  }

  private async write(dir: DirNode): Promise<void> {
    const lines: string[] = [];
    await encode(dir, lines);
    const body = lines.join('\n');
    const header: Header = { format: FORMAT, fingerprint: this.fingerprint, crc32: crc32(body) };
    const cacheDir = join(this.gitdir, PARSE_CACHE_DIR);
    // Not recursive: if the gitdir itself is gone (a removed repository), there is nothing to cache.
    await mkdir(cacheDir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    await removeStaleTemps(cacheDir);
    // A reader sees the old file or the new one, never half of one; no fsync: a torn file fails its checksum.
    const tmp = join(cacheDir, `tmp-${randomBytes(8).toString('hex')}`);
    try {
      await writeFile(tmp, `${JSON.stringify(header)}\n${body}`);
      await rename(tmp, this.path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }
}

async function removeStaleTemps(cacheDir: string): Promise<void> {
  for (const name of await readdir(cacheDir)) {
    if (!name.startsWith('tmp-')) continue;
    const path = join(cacheDir, name);
    const info = await stat(path).catch(() => null);
    if (info && Date.now() - info.mtimeMs > STALE_TEMP_MS) await rm(path, { force: true });
  }
}

/**
 * Appends the lines of `dir` and returns whether everything below it was saved. A directory keeps its oid
 * only then: TreeReader takes a directory of the same oid whole, and compares the files of one without (a
 * file left out is then read from its blob). Values JSON would not give back as they are (-0, undefined,
 * a non-finite number) are left out.
 */
async function encode(dir: DirNode, lines: string[]): Promise<boolean> {
  const at = lines.push('') - 1;
  let complete = true;
  let chunk: Extract<Line, ['files', ...unknown[]]> | undefined;
  for (const [name, node] of dir.files) {
    if (!survivesJson(node.entry.file ?? null) || !survivesJson(node.issues)) {
      complete = false;
      continue;
    }
    chunk ??= ['files', dir.path, [], [], [], []];
    chunk[2].push(name);
    chunk[3].push(node.oid);
    chunk[4].push(node.entry.file ?? null);
    chunk[5].push([...node.issues]);
    if (chunk[2].length === FILES_PER_LINE) {
      lines.push(JSON.stringify(chunk));
      chunk = undefined;
      await loopTurn();
    }
  }
  if (chunk) lines.push(JSON.stringify(chunk));
  for (const sub of dir.dirs.values()) if (!(await encode(sub, lines))) complete = false;
  const line: Line = ['dir', dir.path, complete ? dir.oid : ''];
  lines[at] = JSON.stringify(line);
  return complete;
}

/** The saved directory as TreeReader would have read it (parsed values frozen, as parsedFileNode does). */
async function decode(lines: readonly string[]): Promise<DirNode> {
  const dirs = new Map<string, { oid: string; path: string; dirs: Map<string, DirNode>; files: Map<string, FileNode> }>();
  let root: DirNode | undefined;
  for (const text of lines) {
    const line = JSON.parse(text) as Line;
    if (line[0] === 'dir') {
      const [, path, oid] = line;
      const dir = { oid, path, dirs: new Map<string, DirNode>(), files: new Map<string, FileNode>() };
      const slash = path.lastIndexOf('/');
      const parent = dirs.get(path.slice(0, slash));
      if (parent) parent.dirs.set(path.slice(slash + 1), dir);
      else if (root) throw new Error(`directory ${path} has no parent in the cache`);
      else root = dir;
      dirs.set(path, dir);
    } else {
      const [, path, names, oids, files, issues] = line;
      const dir = dirs.get(path);
      if (!dir) throw new Error(`files of ${path} come before their directory`);
      for (let i = 0; i < names.length; i++) {
        const filePath = `${path}/${names[i]}`;
        const file = files[i];
        dir.files.set(names[i], {
          oid: oids[i],
          entry: file ? { path: filePath, file: deepFreeze(file) } : { path: filePath },
          issues: issues[i],
        });
      }
    }
    await loopTurn();
  }
  if (!root) throw new Error('no directory in the cache');
  return root;
}

function survivesJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (Array.isArray(value)) return value.every(survivesJson);
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const key in value) if (!survivesJson((value as Record<string, unknown>)[key])) return false;
    return true;
  }
  return false;
}

let fingerprint: string | null | undefined = null;

/** A hash of everything a parse result depends on; computed once per process (the code does not change). */
export function parserFingerprint(): string | undefined {
  if (fingerprint !== null) return fingerprint;
  try {
    // Node's version too: its Unicode tables decide what the YAML reader's and the schemas' patterns match.
    const hash = createHash('sha1').update(`format ${FORMAT}\nnode ${process.version}\n`);
    const require = createRequire(import.meta.url);
    for (const pkg of ['yaml', 'ajv']) hash.update(`${pkg} ${(require(`${pkg}/package.json`) as { version: string }).version}\n`);
    for (const dir of ['../../repository/', '../../validation/', '../../../../schemas/'])
      hashTree(hash, fileURLToPath(new URL(dir, import.meta.url)));
    // The model (environments, operators, kinds) comes from @flagops/core: its whole package, sources or build.
    hashTree(hash, dirname(require.resolve('@flagops/core/package.json')));
    fingerprint = hash.digest('hex');
  } catch {
    fingerprint = undefined;
  }
  return fingerprint;
}

function hashTree(hash: ReturnType<typeof createHash>, dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) hashTree(hash, path);
    else if (entry.isFile()) hash.update(`${entry.name}\n`).update(fs.readFileSync(path));
  }
}
