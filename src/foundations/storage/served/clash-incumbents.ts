import { classifyPath } from '../../repository/layout.js';
import { type Clash, claimsClash, firstByKey } from '../../repository/project-checks.js';
import { Lru } from '../git/lru.js';
import type { ObjectStore } from '../git/object-store.js';
import type { ProjectFolders } from './project-folders.js';
import type { ServedHistoryCache } from './served-history-cache.js';

/**
 * Which flag keeps an id or a letter-case-folded key that several flags claim at a commit, and which project
 * keeps an id several projects claim: the one that has claimed it the longest without a break along main's
 * first-parent history, so that a commit copying a flag's or project's id, or adding `Checkout` beside
 * `checkout`, cannot take it from the one that had it. Those that started to claim it in the same commit (or
 * have all claimed it since the first commit) are decided by the default order, first by project, then by key.
 * Read from history alone, so every server decides the same; each decision is kept per commit, in memory and
 * with the rest of the served history on disk, so a restart does not walk back to where a long-lived clash began.
 */
export class ClashIncumbents {
  /** Per commit, clash and files still in the running there, the path that keeps it (null: the default). */
  private readonly decided = new Lru<string, Promise<string | null>>(10_000);

  constructor(
    private readonly objects: ObjectStore,
    private readonly folders: ProjectFolders,
    private readonly cache?: ServedHistoryCache,
  ) {}

  /** The flag file and project.yaml paths that keep their clash at a commit whose first parent is `parent`: those that claimed it first. */
  async at(parent: string | null, clashes: readonly Clash[]): Promise<Set<string>> {
    const kept = new Set<string>();
    if (parent === null) return kept;
    for (const clash of clashes) {
      const path = await this.keeper(parent, clash, [...clash.paths].sort());
      if (path !== null) kept.add(path);
    }
    return kept;
  }

  /** Of `paths` (all claiming the clash at the child of `from`), the one that claimed it longest; null when they started together. */
  private keeper(from: string, clash: Clash, paths: readonly string[]): Promise<string | null> {
    const key = decisionKey(from, clash, paths);
    let promise = this.decided.get(key);
    if (promise) return promise;
    promise = (async () => {
      await this.cache?.load();
      const recorded = this.cache?.get(key);
      if (recorded !== undefined) return recorded === '-' ? null : recorded;
      const answer = await this.walk(from, clash, paths);
      this.cache?.set(key, answer ?? '-');
      return answer;
    })();
    this.decided.set(key, promise);
    const failed = promise;
    failed.catch(() => {
      if (this.decided.peek(key) === failed) this.decided.delete(key);
    });
    return promise;
  }

  /** Back from `from` while more than one of `paths` claims the clash; stops early where a decision is known. */
  private async walk(from: string, clash: Clash, paths: readonly string[]): Promise<string | null> {
    let running = paths;
    for (let commit: string | null = from; commit !== null; commit = await this.parentOf(commit)) {
      if (commit !== from) {
        const key = decisionKey(commit, clash, running);
        const known = this.decided.peek(key);
        const recorded = this.cache?.get(key);
        if (known || recorded !== undefined) {
          const answer = known ? await known : recorded === '-' ? null : recorded!;
          return answer ?? (running === paths ? null : firstByKey(running));
        }
      }
      const still: string[] = [];
      for (const path of running) if (await this.claims(commit, clash, path)) still.push(path);
      if (still.length === 1) return still[0];
      if (still.length === 0) break;
      running = still;
    }
    return running === paths ? null : firstByKey(running);
  }

  private async claims(commit: string, clash: Clash, path: string): Promise<boolean> {
    const where = classifyPath(path);
    if (where.kind !== 'flag' && where.kind !== 'project') return false;
    const folder = await this.folders.at(commit, where.project);
    if (!folder) return false;
    if (where.kind === 'project') return claimsClash(clash, await this.folders.projectSlot(folder));
    return claimsClash(clash, (await this.folders.flagFiles(folder, where.flag)).flag);
  }

  private async parentOf(commit: string): Promise<string | null> {
    return (await this.objects.readCommit(commit)).parents[0] ?? null;
  }
}

/** How a decision is kept: the commit, the clash and the files still in the running there. */
function decisionKey(commit: string, clash: Clash, running: readonly string[]): string {
  return `clash ${commit} ${clash.key} ${running.join(' ')}`;
}
