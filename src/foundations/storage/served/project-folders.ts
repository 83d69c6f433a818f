import { ENVIRONMENTS, type EnvironmentConfig, type FlagFile, type KillsFile, type ProjectFile, type SegmentFile } from '@flagops/core';
import type { FlagFiles, ProjectFiles } from '../../repository/held-units.js';
import { jsonEqual } from '../../repository/json-equal.js';
import { KILLS_FILE_NAME, layout } from '../../repository/layout.js';
import type { Slot } from '../../repository/project-checks.js';
import type { CommitGraph } from '../git/commit-graph.js';
import { isTreeMode, type TreeEntry } from '../git/git-objects.js';
import { Lru } from '../git/lru.js';
import type { ObjectStore } from '../git/object-store.js';
import { changedTreeSpans, TreeBytes } from '../git/tree-bytes.js';
import { deepFreeze, type ParseFile } from './tree-reader.js';

const YAML = '.yaml';

/** Lookups into one directory answered by scanning its entries before a map of them is built. */
const SCANS_BEFORE_MAP = 16;

/** One project folder of a commit, by object ids: what it takes to tell which of its units are valid. */
export interface ProjectFolder {
  oid: string;
  slug: string;
  projectFile: string | undefined;
  flagsDir: string | undefined;
  /** The tree of each environment's folder, in ENVIRONMENTS order. */
  envDirs: ReadonlyArray<string | undefined>;
  segmentsDir: string | undefined;
}

/**
 * Reads project folders of any commit by object id, for what serving needs of history (the last valid state
 * of a held-back flag or project, and whether a commit changed what an environment serves) without
 * assembling whole commits: folders are cached by tree oid, parsed files by blob oid and path, and trees by
 * the object store. Everything read is immutable, so nothing here is ever stale. A file is found by scanning
 * its directory's entries, until the directory has been looked into a few times: a commit's new 10,000-file
 * directory is usually looked into once or twice, where building a map would cost more than the scans, but a
 * push that breaks a thousand flags looks into it a thousand times.
 */
export class ProjectFolders {
  private readonly folders = new Lru<string, ProjectFolder>(1024);
  private readonly parsed = new Lru<string, { value: unknown }>(20_000);
  /** versionOf's answers, by blob oid and path (null: the file has no version). */
  private readonly versions = new Lru<string, number | null>(100_000);
  /** Per directory, how often it was looked into, and past SCANS_BEFORE_MAP lookups its files by name. */
  private readonly lookups = new Lru<string, { count: number; byName?: Map<string, string> }>(
    400_000,
    (entry) => 1 + (entry.byName?.size ?? 0),
  );

  constructor(
    private readonly objects: ObjectStore,
    private readonly graph: CommitGraph,
    private readonly parse: ParseFile,
  ) {}

  /** The folder `projects/<slug>` at `commit`, or undefined when the commit has none. */
  async at(commit: string, slug: string): Promise<ProjectFolder | undefined> {
    const oid = await this.graph.treeOid(commit, layout.projectDir(slug));
    if (oid === null) return undefined;
    // The same tree under another slug names other paths: both are part of the key.
    const key = `${oid} ${slug}`;
    let folder = this.folders.get(key);
    if (!folder) {
      folder = await this.read(oid, slug);
      this.folders.set(key, folder);
    }
    return folder;
  }

  /** The project folders (slugs) of a commit. */
  async slugs(commit: string): Promise<string[]> {
    const oid = await this.graph.treeOid(commit, layout.projectsDir);
    if (oid === null) return [];
    return (await this.objects.readTree(oid)).filter((entry) => isTreeMode(entry.mode)).map((entry) => entry.name);
  }

  /**
   * The project folders (slugs) whose tree differs between two commits (`before` null: every one of `after`),
   * added and removed ones included: one comparison of the two `projects/` listings, no folder read.
   */
  async changedSlugs(before: string | null, after: string): Promise<string[]> {
    const [a, b] = await Promise.all([
      before === null ? null : this.graph.treeOid(before, layout.projectsDir),
      this.graph.treeOid(after, layout.projectsDir),
    ]);
    if (a === b) return [];
    const folders = async (oid: string | null) =>
      oid === null ? [] : (await this.objects.readTree(oid)).filter((entry) => isTreeMode(entry.mode));
    const [old, now] = await Promise.all([folders(a), folders(b)]);
    const oldByName = new Map(old.map((entry) => [entry.name, entry.oid]));
    const changed = now.filter((entry) => oldByName.get(entry.name) !== entry.oid).map((entry) => entry.name);
    const kept = new Set(now.map((entry) => entry.name));
    for (const entry of old) if (!kept.has(entry.name)) changed.push(entry.name);
    return changed;
  }

  /** The files of one flag, parsed. */
  async flagFiles(folder: ProjectFolder, key: string): Promise<FlagFiles> {
    const flagOid = await this.oidIn(folder.flagsDir, `${key}${YAML}`);
    const flag = flagOid === undefined ? undefined : await this.slot<FlagFile>(layout.flagFile(folder.slug, key), flagOid);
    const configs = await Promise.all(
      ENVIRONMENTS.map(async (env, i) => {
        const oid = await this.oidIn(folder.envDirs[i], `${key}${YAML}`);
        return oid === undefined ? undefined : this.slot<EnvironmentConfig>(layout.configFile(folder.slug, env, key), oid);
      }),
    );
    return { flag, configs };
  }

  /** The id of flag `key` in the folder (its file's, or the derived one), or undefined without a valid flag file. */
  async flagId(folder: ProjectFolder, key: string): Promise<string | undefined> {
    const oid = await this.oidIn(folder.flagsDir, `${key}${YAML}`);
    if (oid === undefined) return undefined;
    return (await this.slot<FlagFile>(layout.flagFile(folder.slug, key), oid)).value?.id;
  }

  /** The blob oids of one flag's files, joined (equal strings: the same files); undefined when it has none. */
  async flagSignature(folder: ProjectFolder, key: string): Promise<string | undefined> {
    const name = `${key}${YAML}`;
    const oids = [await this.oidIn(folder.flagsDir, name)];
    for (const dir of folder.envDirs) oids.push(await this.oidIn(dir, name));
    return oids.every((oid) => oid === undefined) ? undefined : oids.map((oid) => oid ?? '-').join(' ');
  }

  /** The project's project.yaml, parsed; undefined when it has none. */
  async projectSlot(folder: ProjectFolder): Promise<Slot<ProjectFile> | undefined> {
    return folder.projectFile === undefined ? undefined : this.slot<ProjectFile>(layout.projectFile(folder.slug), folder.projectFile);
  }

  /** The project's own files, parsed. */
  async projectFiles(folder: ProjectFolder): Promise<ProjectFiles> {
    const project = await this.projectSlot(folder);
    const kills = await Promise.all(ENVIRONMENTS.map((env) => this.killsSlot(folder, env)));
    const segments = await Promise.all(
      (await this.fileEntries(folder.segmentsDir))
        .filter(({ name }) => name.endsWith(YAML))
        .map(({ name, oid }) => this.slot<SegmentFile>(layout.segmentFile(folder.slug, name.slice(0, -YAML.length)), oid)),
    );
    return { project, kills, segments };
  }

  /** The blob oids of the project's own files, joined (the segments folder by its tree). */
  async projectSignature(folder: ProjectFolder): Promise<string> {
    const oids = [folder.projectFile, folder.segmentsDir];
    for (const dir of folder.envDirs) oids.push(await this.oidIn(dir, KILLS_FILE_NAME));
    return oids.map((oid) => oid ?? '-').join(' ');
  }

  async killsSlot(folder: ProjectFolder, env: (typeof ENVIRONMENTS)[number]): Promise<Slot<KillsFile> | undefined> {
    const oid = await this.oidIn(folder.envDirs[ENVIRONMENTS.indexOf(env)], KILLS_FILE_NAME);
    return oid === undefined ? undefined : this.slot<KillsFile>(layout.killsFile(folder.slug, env), oid);
  }

  async killsOid(folder: ProjectFolder, envIndex: number): Promise<string | undefined> {
    return this.oidIn(folder.envDirs[envIndex], KILLS_FILE_NAME);
  }

  /** Keys with a flag file in the folder. */
  async flagKeys(folder: ProjectFolder): Promise<Set<string>> {
    const keys = new Set<string>();
    for (const { name } of await this.fileEntries(folder.flagsDir)) if (name.endsWith(YAML)) keys.add(name.slice(0, -YAML.length));
    return keys;
  }

  /** Flag keys whose files differ between two versions of a folder (only changed directories are read). */
  async touchedKeys(before: ProjectFolder, after: ProjectFolder): Promise<Set<string>> {
    const touched = new Set<string>();
    const pairs: Array<[string | undefined, string | undefined]> = [
      [before.flagsDir, after.flagsDir],
      ...before.envDirs.map((dir, i): [string | undefined, string | undefined] => [dir, after.envDirs[i]]),
    ];
    for (const [a, b] of pairs) {
      if (a === b) continue;
      for (const name of differingNames(await this.fileEntries(a), await this.fileEntries(b))) {
        if (name !== KILLS_FILE_NAME && name.endsWith(YAML)) touched.add(name.slice(0, -YAML.length));
      }
    }
    return touched;
  }

  /** Whether one flag's definition, or its config in one environment, differs between two folders. */
  async fileDiffers(before: ProjectFolder, after: ProjectFolder, key: string, envIndex: number | 'flag'): Promise<boolean> {
    const dir = (folder: ProjectFolder) => (envIndex === 'flag' ? folder.flagsDir : folder.envDirs[envIndex]);
    if (dir(before) === dir(after)) return false;
    const name = `${key}${YAML}`;
    return (await this.oidIn(dir(before), name)) !== (await this.oidIn(dir(after), name));
  }

  /**
   * Whether a flag's config in one environment serves differently: its file differs in more than `version`
   * and `schedule`, which the snapshot does not carry (a schedule written or cancelled, or a step skipped,
   * changes nothing an application evaluates). A file that is invalid on either side counts as different.
   */
  async servedConfigDiffers(before: ProjectFolder, after: ProjectFolder, key: string, envIndex: number): Promise<boolean> {
    if (!(await this.fileDiffers(before, after, key, envIndex))) return false;
    const [old, now] = await Promise.all([before, after].map((folder) => this.configSlot(folder, key, envIndex)));
    if (old?.value === undefined || now?.value === undefined) return true;
    const { version: _v1, schedule: _s1, ...oldServed } = old.value;
    const { version: _v2, schedule: _s2, ...nowServed } = now.value;
    return !jsonEqual(oldServed as never, nowServed as never);
  }

  /**
   * The config and segment files (what carries a `version`) whose blob differs between two versions of a folder
   * (`before` undefined: a new project, every one of them), with their blob oids before and after (undefined:
   * absent). Only the directories that changed are read.
   */
  async changedVersionedFiles(
    before: ProjectFolder | undefined,
    after: ProjectFolder,
  ): Promise<Array<{ path: string; oldOid?: string; newOid?: string }>> {
    const changed: Array<{ path: string; oldOid?: string; newOid?: string }> = [];
    const compare = async (a: string | undefined, b: string | undefined, pathOf: (name: string) => string) => {
      if (a === b) return;
      // Only the spans where the two tree objects' bytes differ are parsed (a step of history changes a few
      // files of directories of thousands).
      const [oldBytes, nowBytes] = await Promise.all(
        [a, b].map((oid) => (oid === undefined ? TreeBytes.EMPTY : this.objects.readTreeBytes(oid))),
      );
      const spans = changedTreeSpans(oldBytes, nowBytes);
      const files = (entries: readonly TreeEntry[]) => entries.filter((entry) => isFileMode(entry.mode));
      for (const entry of differingEntries(files(spans.before), files(spans.after))) {
        if (entry.name === KILLS_FILE_NAME || !entry.name.endsWith(YAML)) continue;
        changed.push({ path: pathOf(entry.name.slice(0, -YAML.length)), oldOid: entry.oldOid, newOid: entry.newOid });
      }
    };
    for (let i = 0; i < ENVIRONMENTS.length; i++)
      await compare(before?.envDirs[i], after.envDirs[i], (key) => layout.configFile(after.slug, ENVIRONMENTS[i], key));
    await compare(before?.segmentsDir, after.segmentsDir, (key) => layout.segmentFile(after.slug, key));
    return changed;
  }

  /**
   * The `version` a config or segment file says, when the file is valid on its own; undefined otherwise. Walking
   * history reads it of every config a commit changes (30,000 files for an import of 10,000 flags): only the
   * number is kept, not the parsed file (~20 MB of heap at that size).
   */
  async versionOf(path: string, oid: string): Promise<number | undefined> {
    const key = `${oid} ${path}`;
    const known = this.versions.get(key);
    if (known !== undefined) return known ?? undefined;
    const value = (this.parsed.peek(key) ?? (await this.parseBlob(path, oid))).value as { version?: number } | undefined;
    const version = typeof value?.version === 'number' ? value.version : undefined;
    this.versions.set(key, version ?? null);
    return version;
  }

  private async configSlot(folder: ProjectFolder, key: string, envIndex: number): Promise<Slot<EnvironmentConfig> | undefined> {
    const oid = await this.oidIn(folder.envDirs[envIndex], `${key}${YAML}`);
    return oid === undefined ? undefined : this.slot<EnvironmentConfig>(layout.configFile(folder.slug, ENVIRONMENTS[envIndex], key), oid);
  }

  private async read(oid: string, slug: string): Promise<ProjectFolder> {
    const entries = await this.objects.readTree(oid);
    const blob = (name: string) => entries.find((e) => e.name === name && !isTreeMode(e.mode) && isFileMode(e.mode))?.oid;
    const tree = (list: typeof entries, name: string) => list.find((e) => e.name === name && isTreeMode(e.mode))?.oid;
    const environments = tree(entries, 'environments');
    const envEntries = environments === undefined ? [] : await this.objects.readTree(environments);
    return {
      oid,
      slug,
      projectFile: blob('project.yaml'),
      flagsDir: tree(entries, 'flags'),
      envDirs: ENVIRONMENTS.map((env) => tree(envEntries, env)),
      segmentsDir: tree(entries, 'segments'),
    };
  }

  /** The files (not subdirectories, symlinks or submodules) of a directory, in tree order. */
  private async fileEntries(dir: string | undefined): Promise<readonly TreeEntry[]> {
    if (dir === undefined) return [];
    return (await this.objects.readTree(dir)).filter((entry) => isFileMode(entry.mode));
  }

  private async oidIn(dir: string | undefined, name: string): Promise<string | undefined> {
    if (dir === undefined) return undefined;
    const entries = await this.objects.readTree(dir);
    let seen = this.lookups.get(dir);
    if (!seen) {
      seen = { count: 0 };
      this.lookups.set(dir, seen);
    }
    if (!seen.byName && ++seen.count > SCANS_BEFORE_MAP) {
      seen.byName = new Map(entries.filter((entry) => isFileMode(entry.mode)).map((entry) => [entry.name, entry.oid]));
      this.lookups.set(dir, seen); // weighed again, now with its map
    }
    if (seen.byName) return seen.byName.get(name);
    for (const entry of entries) if (entry.name === name && isFileMode(entry.mode)) return entry.oid;
    return undefined;
  }

  /** A file's slot: its value when it is valid on its own, undefined when it is present but invalid. */
  private async slot<T>(path: string, oid: string): Promise<Slot<T>> {
    const key = `${oid} ${path}`;
    let parsed = this.parsed.get(key);
    if (!parsed) {
      parsed = await this.parseBlob(path, oid);
      this.parsed.set(key, parsed);
    }
    return { path, value: parsed.value as T | undefined };
  }

  /** The file's value when it parses without issues, frozen (cached values are shared). */
  private async parseBlob(path: string, oid: string): Promise<{ value: unknown }> {
    const result = this.parse(path, (await this.objects.readTyped(oid, 'blob')).toString('utf8'));
    return { value: result.file && result.issues.length === 0 ? deepFreeze(result.file.value) : undefined };
  }
}

function isFileMode(mode: string): boolean {
  return mode === '100644' || mode === '100755';
}

/**
 * Names whose blob differs between two listings (added, removed or changed), by one merge of the two in tree
 * order. Were the two not in one order (names git sorts differently from JavaScript), a name would come out as
 * removed and added: reported, never missed.
 */
function differingNames(before: readonly TreeEntry[], after: readonly TreeEntry[]): string[] {
  return differingEntries(before, after).map((entry) => entry.name);
}

/** The entries whose blob differs between two listings, with their oids on each side (absent: not there). */
function differingEntries(
  before: readonly TreeEntry[],
  after: readonly TreeEntry[],
): Array<{ name: string; oldOid?: string; newOid?: string }> {
  const out: Array<{ name: string; oldOid?: string; newOid?: string }> = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    const a = before[i];
    const b = after[j];
    if (b === undefined || (a !== undefined && a.name < b.name)) {
      out.push({ name: a.name, oldOid: a.oid });
      i++;
    } else if (a === undefined || b.name < a.name) {
      out.push({ name: b.name, newOid: b.oid });
      j++;
    } else {
      if (a.oid !== b.oid) out.push({ name: a.name, oldOid: a.oid, newOid: b.oid });
      i++;
      j++;
    }
  }
  return out;
}
