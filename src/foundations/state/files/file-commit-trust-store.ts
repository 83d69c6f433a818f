import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { StateFileError, stateWriteFault, unreadableStateFile } from '../../state-files/state-files.js';
import type { CommitTrustStore } from '../commit-trust-store.js';

/**
 * Commit trust as files under `<dataDir>/state/`:
 *
 * - `commit-signing-key`: the key in hex, created on first use, mode 0600.
 * - `unsigned-trailers/<org>`: the head of `main` when this version first opened the organisation's
 *   repository, or `none`.
 */
export const SIGNING_KEY_FILE = 'commit-signing-key';
export const UNSIGNED_TRAILERS_DIR = 'unsigned-trailers';
const NONE = 'none';
const OID = /^[0-9a-f]{40}$/;

export class FileCommitTrustStore implements CommitTrustStore {
  constructor(private readonly stateDir: string) {}

  async signingKey(): Promise<Buffer> {
    const file = join(this.stateDir, SIGNING_KEY_FILE);
    const text = (await createOnce(file, () => `${randomBytes(32).toString('hex')}\n`, `state file ${SIGNING_KEY_FILE}`)).trim();
    if (!/^[0-9a-f]{64,}$/.test(text)) {
      throw new StateFileError(
        `state file ${SIGNING_KEY_FILE} is not a hexadecimal key of at least 64 digits; restore it from a backup of the state directory (removing it makes a new key, and the commits signed so far are then described from their diffs)`,
      );
    }
    return Buffer.from(text, 'hex');
  }

  async unsignedTrailersUpTo(org: string, head: () => Promise<string | null>): Promise<string | null> {
    const file = join(this.stateDir, UNSIGNED_TRAILERS_DIR, org);
    const text = (await createOnce(file, async () => `${(await head()) ?? NONE}\n`, `state file ${UNSIGNED_TRAILERS_DIR}/${org}`)).trim();
    if (text === NONE) return null;
    if (!OID.test(text)) {
      throw new StateFileError(
        `state file ${UNSIGNED_TRAILERS_DIR}/${org} holds neither a commit id nor "${NONE}"; restore it from a backup of the state directory, or write into it the id of the commit main pointed at when this version first started ("${NONE}" if the repository was new then)`,
      );
    }
    return text;
  }
}

/**
 * Creates `file` (mode 0600) with `content()` unless it exists, and returns what it holds. One that exists is
 * only read: a start on a full or read-only disk writes nothing here. The content is complete before the name
 * appears (written beside it, then hard-linked), and of two processes creating it at once, one wins and both
 * read its content. `label` names it in an error.
 */
async function createOnce(file: string, content: () => string | Promise<string>, label: string): Promise<string> {
  const existing = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) =>
    err.code === 'ENOENT' ? null : Promise.reject(unreadableStateFile(label, err)),
  );
  if (existing !== null) return existing;
  const text = await content();
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await mkdir(join(file, '..'), { recursive: true, mode: 0o700 });
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temp, file).catch((err: NodeJS.ErrnoException) => (err.code === 'EEXIST' ? undefined : Promise.reject(err)));
  } catch (err) {
    throw stateWriteFault(file, err);
  } finally {
    await rm(temp, { force: true }).catch(() => undefined);
  }
  return readFile(file, 'utf8').catch((err) => Promise.reject(unreadableStateFile(label, err)));
}
