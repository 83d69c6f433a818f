import { join, resolve } from 'node:path';
import { watch } from 'chokidar';

export interface RefWatcher {
  close(): Promise<void>;
}

/**
 * Calls `onChange` (debounced) when `refs/heads/main` or `packed-refs` may have changed: a `git push`
 * renames `main.lock` over `main`, `git pack-refs` rewrites `packed-refs`. chokidar 4 has no globs, so the
 * two directories are watched one level deep and events filtered by path. Resolves once watching.
 */
export async function watchMainRef(
  gitdir: string,
  onChange: () => void,
  options: { debounceMs?: number; onError?: (err: unknown) => void } = {},
): Promise<RefWatcher> {
  const root = resolve(gitdir);
  const heads = join(root, 'refs', 'heads');
  const relevant = new Set([join(heads, 'main'), join(root, 'packed-refs'), heads]);
  const debounceMs = options.debounceMs ?? 30;
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch([root, heads], { depth: 0, ignoreInitial: true });
  watcher.on('all', (_event, path) => {
    if (!relevant.has(resolve(path))) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  });
  watcher.on('error', (err) => options.onError?.(err));
  await new Promise<void>((ready) => watcher.once('ready', () => ready()));
  return {
    close: async () => {
      clearTimeout(timer);
      await watcher.close();
    },
  };
}
