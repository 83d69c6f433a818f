import fs from 'node:fs';

/** fsync on the thread pool: the one file call worth not running on the event loop, as it waits on the disk. */
export function fsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
}
