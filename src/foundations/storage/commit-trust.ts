import type { CommitTrustStore } from '../state/index.js';
import { MIN_SIGNING_KEY_BYTES } from './git/commit-signature.js';

/**
 * The key commits are signed with: `configured` (FLAGOPS_COMMIT_SIGNING_KEY, so that several control planes on
 * one git remote sign alike) when given, else the installation's, kept in the control plane's state.
 */
export async function loadSigningKey(trust: Pick<CommitTrustStore, 'signingKey'>, configured?: string): Promise<Buffer> {
  if (configured === undefined) return trust.signingKey();
  const key = Buffer.from(configured, 'utf8');
  if (key.length < MIN_SIGNING_KEY_BYTES)
    throw new Error(`FLAGOPS_COMMIT_SIGNING_KEY must have at least ${MIN_SIGNING_KEY_BYTES} characters`);
  return key;
}
