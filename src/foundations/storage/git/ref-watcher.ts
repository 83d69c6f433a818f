import { type FSWatcher, type Stats, statSync, watch } from 'node:fs';
import { join, resolve } from 'node:path';

export interface RefWatcher {
  close(): Promise<void>;
}

export interface RefWatcherOptions {
  debounceMs?: number;
  /**
   * How often the ref files are also looked at directly (default 2 s): file-system events can be lost (an
   * overflowed queue, a network file system that sends none), so a move is found at the latest by then.
   */
  checkEveryMs?: number;
  onError?: (err: unknown) => void;
}

/** One directory watched with fs.watch; `ino` tells a directory recreated under the same name from the one watched. */
interface DirWatch {
  path: string;
  watcher?: FSWatcher;
  ino?: number;
  onName: (name: string | null) => void;
}

/**
 * Calls `onChange` (debounced) when `refs/heads/main` or `packed-refs` may have changed: a `git push`
 * renames `main.lock` over `main`, `git pack-refs` renames `packed-refs.lock` over `packed-refs`. Watched with
 * fs.watch (inotify on Linux): the repository's directory, `refs` and `refs/heads`, one level each, events
 * filtered by name, so a commit costs a few events and no file-system calls until the debounce fires. A
 * watched directory that is removed or recreated (`git pack-refs --prune`, a restore) is watched again once its
 * parent reports it, and a periodic look at the two files (one stat each) catches what the events missed.
 * Resolves once watching.
 */
export async function watchMainRef(gitdir: string, onChange: () => void, options: RefWatcherOptions = {}): Promise<RefWatcher> {
  const root = resolve(gitdir);
  const refsDir = join(root, 'refs');
  const heads = join(refsDir, 'heads');
  const files = [join(heads, 'main'), join(root, 'packed-refs')];
  const debounceMs = options.debounceMs ?? 30;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const changed = () => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      seen = signature();
      onChange();
    }, debounceMs);
  };

  const dirs: DirWatch[] = [
    {
      path: root,
      onName: (name) => {
        if (name === 'refs' || name === null) rearm();
        if (name === 'packed-refs' || name === 'refs' || name === null) changed();
      },
    },
    {
      path: refsDir,
      onName: (name) => {
        if (name === 'heads' || name === null) {
          rearm();
          changed();
        }
      },
    },
    {
      path: heads,
      onName: (name) => {
        // The directory's own removal or move is reported under its name (`heads`).
        if (name === 'heads' || name === null) rearm();
        if (name === 'main' || name === 'heads' || name === null) changed();
      },
    },
  ];

  /** Watches every directory not watched yet or recreated since; one that does not exist waits for its parent's event. */
  function rearm(): void {
    if (closed) return;
    for (const dir of dirs) {
      const ino = inode(dir.path);
      if (dir.watcher && ino === dir.ino) continue;
      dir.watcher?.close();
      dir.watcher = undefined;
      dir.ino = undefined;
      if (ino === undefined) continue;
      try {
        const watcher = watch(dir.path, { persistent: false }, (_event, name) => dir.onName(name === null ? null : String(name)));
        watcher.on('error', (err) => {
          // A watcher that failed sends nothing more: let the next look watch the directory again.
          if (dir.watcher === watcher) dir.watcher = undefined;
          watcher.close();
          options.onError?.(err);
        });
        dir.watcher = watcher;
        dir.ino = ino;
      } catch (err) {
        // Removed between the stat and the watch: its parent's event, or the next look, watches it again.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') options.onError?.(err);
      }
    }
  }

  const signature = () => files.map((file) => describe(statOrUndefined(file))).join('|');
  let seen = signature();
  rearm();
  const checking = setInterval(() => {
    rearm();
    if (signature() !== seen) changed();
  }, options.checkEveryMs ?? 2_000);
  checking.unref();

  return {
    close: async () => {
      closed = true;
      clearTimeout(timer);
      clearInterval(checking);
      for (const dir of dirs) dir.watcher?.close();
    },
  };
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function inode(path: string): number | undefined {
  const stat = statOrUndefined(path);
  return stat?.isDirectory() ? stat.ino : undefined;
}

/** A ref file is replaced by a rename: a new inode, and times and size of its own. */
function describe(stat: Stats | undefined): string {
  return stat ? `${stat.ino}:${stat.mtimeMs}:${stat.ctimeMs}:${stat.size}` : '-';
}
