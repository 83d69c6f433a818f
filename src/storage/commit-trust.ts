import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MIN_SIGNING_KEY_BYTES } from './git/commit-signature.js';

/**
 * What lets the audit trail believe a commit's `Flagops-*` trailers, kept under `<dataDir>/state/`:
 *
 * - `commit-signing-key`: the installation's key for commit signatures (commit-signature.ts), 32 random
 *   bytes in hex, created on first start, mode 0600. `FLAGOPS_COMMIT_SIGNING_KEY` replaces it, so that
 *   several control planes on one git remote sign alike.
 * - `unsigned-trailers/<org>`: the head of `main` when this version first opened the organisation's
 *   repository (or `none`). Commits up to it were written before commits were signed, so their unsigned
 *   trailers are still believed; after it, only signed ones are.
 */

export const SIGNING_KEY_FILE = 'commit-signing-key';
export const UNSIGNED_TRAILERS_DIR = 'unsigned-trailers';
const NONE = 'none';
const OID = /^[0-9a-f]{40}$/;

/** The signing key: `configured` (the environment setting) when given, else the state file, created if absent. */
export async function loadSigningKey(stateDir: string, configured?: string): Promise<Buffer> {
  if (configured !== undefined) {
    const key = Buffer.from(configured, 'utf8');
    if (key.length < MIN_SIGNING_KEY_BYTES)
      throw new Error(`FLAGOPS_COMMIT_SIGNING_KEY must have at least ${MIN_SIGNING_KEY_BYTES} characters`);
    return key;
  }
  const file = join(stateDir, SIGNING_KEY_FILE);
  const text = (await createOnce(file, `${randomBytes(32).toString('hex')}\n`)).trim();
  if (!/^[0-9a-f]{64,}$/.test(text)) throw new Error(`state file ${SIGNING_KEY_FILE} is not a hexadecimal key; restore it from a backup`);
  return Buffer.from(text, 'hex');
}

/**
 * The commit up to which unsigned trailers of `org` are believed: recorded the first time this is asked
 * (`head()` then, null for an empty or new repository), the same answer ever after.
 */
export async function unsignedTrailersUpTo(stateDir: string, org: string, head: () => Promise<string | null>): Promise<string | null> {
  const file = join(stateDir, UNSIGNED_TRAILERS_DIR, org);
  const existing = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? null : Promise.reject(err)));
  const text = (existing ?? (await createOnce(file, `${(await head()) ?? NONE}\n`))).trim();
  if (text === NONE) return null;
  if (!OID.test(text)) throw new Error(`state file ${UNSIGNED_TRAILERS_DIR}/${org} holds neither a commit id nor "${NONE}"`);
  return text;
}

/**
 * Creates `file` (mode 0600) with `content` unless it exists, and returns what it holds. The content is
 * complete before the name appears (written beside it, then hard-linked), and of two processes creating it
 * at once, one wins and both read its content.
 */
async function createOnce(file: string, content: string): Promise<string> {
  const dir = join(file, '..');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await rm(temp, { force: true });
  }
  return readFile(file, 'utf8');
}
