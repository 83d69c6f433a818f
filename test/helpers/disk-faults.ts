import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Makes a directory and every directory below it refuse new entries, as a read-only mount does: chattr +i
 * (root, whom file modes do not stop) or a+w removed (anyone else). Undone with `writable` true.
 */
export function setWritable(dir: string, writable: boolean): void {
  if (process.getuid?.() !== 0) {
    execFileSync('chmod', ['-R', writable ? 'u+w' : 'a-w', dir]);
    return;
  }
  const dirs = [
    dir,
    ...readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => path.join(e.parentPath, e.name)),
  ];
  execFileSync('chattr', [writable ? '-i' : '+i', ...dirs]);
}

/** A tmpfs of `size` (mount's `size=`, e.g. `8m`), root only where mounts are allowed, or undefined. */
export async function smallDisk(size: string): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const dir = await mkdtemp(path.join(tmpdir(), 'flagops-small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    await rm(dir, { recursive: true, force: true });
    return undefined;
  }
}

/** Writes `file` until the disk answers ENOSPC, to its last pages: a write of one byte finds no room either. */
export function fillDisk(file: string): void {
  for (const [flags, chunk] of [
    ['w', Buffer.alloc(64 * 1024)],
    ['a', Buffer.alloc(1)],
  ] as const) {
    const fd = openSync(file, flags);
    try {
      for (;;) writeSync(fd, chunk);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    } finally {
      closeSync(fd);
    }
  }
}
