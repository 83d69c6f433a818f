import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../foundations/state-files/state-files.js';
import { isViewBody, type ViewBody } from './replica-holder.js';

/**
 * The last good views, one file each under `<dataDir>/replica/snapshots/`, so a replica that restarts while
 * the control plane is down serves what it served before. Written atomically: a crash leaves the old file.
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
    await writeFileAtomic(this.file(body.projectId, body.environment), JSON.stringify({ org, view: body }), 0o600);
  }

  async remove(projectId: string, env: string): Promise<void> {
    await rm(this.file(projectId, env), { force: true });
  }

  /** Every saved view; unreadable files are skipped (the next sync rewrites them). */
  async loadAll(): Promise<Array<{ org: string; view: ViewBody }>> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const out: Array<{ org: string; view: ViewBody }> = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      try {
        const saved = JSON.parse(await readFile(path.join(this.dir, name), 'utf8')) as { org?: unknown; view?: unknown };
        if (typeof saved.org === 'string' && isViewBody(saved.view)) out.push({ org: saved.org, view: saved.view });
      } catch {
        // a file cut short by a crash mid-rename cannot happen (atomic write); anything else is not ours
      }
    }
    return out;
  }
}
