import { createHmac, timingSafeEqual } from 'node:crypto';
import { type CommitObject, hashObject, serializeCommit } from './git-objects.js';

/**
 * The proof that a commit was made by this service: its last trailer, `Flagops-Signature: <hex>`, is the
 * HMAC-SHA-256, under the installation's signing key, of the whole commit object as it would be without that
 * line (tree, parents, author, committer and message). Anyone can write `Flagops-*` trailers into a commit
 * they push; only the holder of the key can sign them, and a signature binds them to that exact tree and
 * parent, so it cannot be moved onto another change.
 */

export const SIGNATURE_TRAILER = 'Flagops-Signature';

/** Keeps these MACs apart from anything else the same key might ever authenticate. */
const DOMAIN = 'flagops commit signature v1\0';
const SIGNATURE_LINE = new RegExp(`\\n${SIGNATURE_TRAILER}: ([0-9a-f]{64})\\n$`);

/** Shorter keys are refused: the key is the only thing between a pusher and a forged audit entry. */
export const MIN_SIGNING_KEY_BYTES = 32;

export class CommitSigner {
  constructor(private readonly key: Buffer) {
    if (key.length < MIN_SIGNING_KEY_BYTES) throw new Error(`a commit signing key needs at least ${MIN_SIGNING_KEY_BYTES} bytes`);
  }

  /** The commit with its signature appended as the last trailer line; `message` must end with a newline. */
  sign(commit: CommitObject): CommitObject {
    if (!commit.message.endsWith('\n')) throw new Error('a signed commit message must end with a newline');
    return { ...commit, message: `${commit.message}${SIGNATURE_TRAILER}: ${this.mac(commit)}\n` };
  }

  /** True when the commit stored as `oid` is one this key signed, exactly as it was signed. */
  verify(oid: string, commit: CommitObject): boolean {
    const m = SIGNATURE_LINE.exec(commit.message);
    if (!m) return false;
    const expected = Buffer.from(this.mac({ ...commit, message: commit.message.slice(0, m.index + 1) }), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(m[1], 'hex'))) return false;
    // The object must be exactly what was signed: a copy carrying an extra header (a gpgsig, an encoding)
    // parses to the same fields but is another commit.
    return hashObject('commit', serializeCommit(commit)) === oid;
  }

  private mac(commit: CommitObject): string {
    return createHmac('sha256', this.key).update(DOMAIN).update(serializeCommit(commit)).digest('hex');
  }
}
