import type { CommitTrustStore } from '../commit-trust-store.js';
import type { Database } from './database.js';
import { secretMadeOnce } from './pg-secret.js';

const SIGNING_KEY_BYTES = 32;

/** The signing key in flagops_secrets, and where each organisation's unsigned trailers stop in flagops_unsigned_trailers. */
export class PgCommitTrustStore implements CommitTrustStore {
  constructor(private readonly db: Database) {}

  signingKey(): Promise<Buffer> {
    return secretMadeOnce(this.db, 'commit-signing-key', SIGNING_KEY_BYTES);
  }

  async unsignedTrailersUpTo(org: string, head: () => Promise<string | null>): Promise<string | null> {
    const recorded = await this.recorded(org);
    if (recorded) return recorded.upTo;
    await this.db.query('INSERT INTO flagops_unsigned_trailers (org, up_to) VALUES ($1, $2) ON CONFLICT (org) DO NOTHING', [
      org,
      await head(),
    ]);
    const first = await this.recorded(org);
    if (!first) throw new Error(`flagops_unsigned_trailers lost ${org} while it was being recorded`);
    return first.upTo;
  }

  private async recorded(org: string): Promise<{ upTo: string | null } | undefined> {
    const { rows } = await this.db.query<{ up_to: string | null }>('SELECT up_to FROM flagops_unsigned_trailers WHERE org = $1', [org]);
    return rows[0] && { upTo: rows[0].up_to };
  }
}
