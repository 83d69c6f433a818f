import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { type EnvironmentName, isEnvironmentName } from '@flagops/core';
import { readChecksummed, withChecksum } from '../../foundations/state-files/checksummed-text.js';
import { writeFileAtomic } from '../../foundations/state-files/state-files.js';
import { isViewBody, type ViewBody } from './replica-holder.js';

/** A view read back from disk. */
export interface SavedView {
  org: string;
  view: ViewBody;
  /**
   * Written before saved views carried a checksum: it parses, but nothing says it holds what was written. It is
   * served until the first sync, which fetches it whole.
   */
  unverified: boolean;
}

/** A saved view that cannot be served: its checksum does not match, it does not parse, or it cannot be read. */
export interface DamagedView {
  projectId: string;
  environment: EnvironmentName;
  file: string;
  reason: string;
}

/**
 * The last good views, one file each under `<dataDir>/replica/snapshots/`, so a replica that restarts while
 * the control plane is down serves what it served before. Written atomically (a crash leaves the old file), and
 * with a sha256 of the content, so a file damaged on disk is never served as the control plane's view.
 */
export class SnapshotFiles {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = path.join(dataDir, 'replica', 'snapshots');
  }

  private file(projectId: string, env: string): string {
    return path.join(this.dir, `${encodeURIComponent(projectId)}.${env}.json`);
  }

  async save(org: string, body: ViewBody): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeFileAtomic(this.file(body.projectId, body.environment), withChecksum(JSON.stringify({ org, view: body })), 0o600);
  }

  async remove(projectId: string, env: string): Promise<void> {
    await rm(this.file(projectId, env), { force: true });
  }

  /** Every saved view, and the views whose file is damaged (named by the file: its content is not believed). */
  async loadAll(): Promise<{ views: SavedView[]; damaged: DamagedView[] }> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const views: SavedView[] = [];
    const damaged: DamagedView[] = [];
    for (const name of names) {
      const named = viewOfFileName(name);
      if (named === undefined) continue; // not a file this class writes (a temp file of an interrupted write)
      const file = path.join(this.dir, name);
      const read = await this.read(file, named.projectId, named.environment);
      if (typeof read === 'string') damaged.push({ ...named, file, reason: read });
      else views.push(read);
    }
    return { views, damaged };
  }

  /** The view saved in `file`, or why it cannot be served. */
  private async read(file: string, projectId: string, environment: string): Promise<SavedView | string> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      return `it cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
    }
    const checked = readChecksummed(text);
    if ('damaged' in checked) return checked.damaged;
    const saved = parseJson(checked.content) as { org?: unknown; view?: unknown } | undefined;
    if (saved === undefined) return 'it is not JSON';
    if (typeof saved.org !== 'string' || !isViewBody(saved.view)) return 'it does not hold a snapshot view';
    if (saved.view.projectId !== projectId || saved.view.environment !== environment) return 'it holds the view of another file';
    return { org: saved.org, view: saved.view, unverified: !checked.verified };
  }
}

/** The project and environment a saved view's file name says, or undefined for a name this class does not write. */
function viewOfFileName(name: string): { projectId: string; environment: EnvironmentName } | undefined {
  if (!name.endsWith('.json')) return undefined;
  const stem = name.slice(0, -'.json'.length);
  const dot = stem.lastIndexOf('.');
  const environment = stem.slice(dot + 1);
  if (dot <= 0 || !isEnvironmentName(environment)) return undefined;
  try {
    return { projectId: decodeURIComponent(stem.slice(0, dot)), environment };
  } catch {
    return undefined;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
