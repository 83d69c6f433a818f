import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * An engineer's checkout of the service's bare repository, driven through the git CLI, in a temp dir: the test
 * removes it with `checkout.remove()` (in a `finally`).
 */
export async function cloneRepo(gitdir: string): Promise<Checkout> {
  const dir = await mkdtemp(path.join(tmpdir(), 'flagops-clone-'));
  try {
    // No gc --auto in the checkout, which would go on in the background while remove() deletes it (see pushEdit).
    await run('git', ['clone', '-q', '--config', 'gc.auto=0', '--config', 'maintenance.auto=false', gitdir, dir]);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return new Checkout(dir);
}

export class Checkout {
  constructor(readonly dir: string) {}

  git(...args: string[]) {
    return run('git', ['-c', 'user.name=Erin Engineer', '-c', 'user.email=erin@example.com', ...args], { cwd: this.dir });
  }

  read(file: string) {
    return readFile(path.join(this.dir, file), 'utf8');
  }

  write(file: string, text: string) {
    return writeFile(path.join(this.dir, file), text);
  }

  async commitAndPush(message: string) {
    await this.git('add', '-A');
    await this.git('commit', '-q', '-m', message);
    await this.git('push', '-q', 'origin', 'HEAD:main');
  }

  /** Deletes the checkout. Safe to call twice. */
  remove() {
    return rm(this.dir, { recursive: true, force: true });
  }
}
