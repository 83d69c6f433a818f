import { StateFileError } from '../../state-files/state-files.js';
import type { KeyAdditions, KeyRecord, KeySet, KeyStore } from '../key-store.js';
import type { Unsubscribe } from '../unsubscribe.js';
import type { ChangeFeed } from './change-feed.js';
import { type Database, lockForTransaction } from './database.js';

/** Keys and organisations in flagops_keys and flagops_organisations. */
export class PgKeyStore implements KeyStore {
  constructor(
    private readonly db: Database,
    private readonly feed: ChangeFeed,
  ) {}

  async list(): Promise<KeySet> {
    const [organisations, keys] = await Promise.all([
      this.db.query<{ name: string; created_at: string }>('SELECT name, created_at FROM flagops_organisations ORDER BY position'),
      this.db.query<{ record: KeyRecord }>('SELECT record FROM flagops_keys ORDER BY position'),
    ]);
    return {
      organisations: organisations.rows.map((row) => ({ name: row.name, createdAt: row.created_at })),
      keys: keys.rows.map((row) => row.record),
    };
  }

  /** Plans run one at a time across every instance (a lock held until the additions commit), so none reads what another is adding. */
  add<T>(plan: (current: Readonly<KeySet>) => KeyAdditions<T>): Promise<T> {
    return this.db.transaction(['keys'], async (client) => {
      await lockForTransaction(client, 'keys');
      const [organisations, keys] = [
        await client.query<{ name: string; created_at: string }>('SELECT name, created_at FROM flagops_organisations ORDER BY position'),
        await client.query<{ record: KeyRecord }>('SELECT record FROM flagops_keys ORDER BY position'),
      ];
      const {
        organisations: newOrganisations = [],
        keys: newKeys = [],
        result,
      } = plan({
        organisations: organisations.rows.map((row) => ({ name: row.name, createdAt: row.created_at })),
        keys: keys.rows.map((row) => row.record),
      });
      for (const org of newOrganisations) {
        await client.query('INSERT INTO flagops_organisations (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
          org.name,
          org.createdAt,
        ]);
      }
      for (const key of newKeys) {
        await client.query('INSERT INTO flagops_keys (id, org, record) VALUES ($1, $2, $3)', [key.id, key.org, key]);
      }
      return result;
    });
  }

  revoke(org: string, id: string, at: string): Promise<KeyRecord | undefined> {
    return this.db.transaction(['keys'], async (client) => {
      const { rows } = await client.query<{ record: KeyRecord }>(
        `UPDATE flagops_keys SET record = CASE WHEN record ? 'revokedAt' THEN record ELSE record || jsonb_build_object('revokedAt', $3::text) END
         WHERE id = $1 AND org = $2 RETURNING record`,
        [id, org, at],
      );
      return rows[0]?.record;
    });
  }

  /** Under the same lock as `add`, so a rotation and a key made at the same time never both take one prefix. */
  rotate(
    org: string,
    id: string,
    plan: (old: Readonly<KeyRecord>, current: Readonly<KeySet>) => { replacement: KeyRecord; rotatedAt: string; graceEndsAt: string },
  ): Promise<{ old: KeyRecord; replacement: KeyRecord } | undefined> {
    return this.db.transaction(['keys'], async (client) => {
      await lockForTransaction(client, 'keys');
      const [organisations, keys] = [
        await client.query<{ name: string; created_at: string }>('SELECT name, created_at FROM flagops_organisations ORDER BY position'),
        await client.query<{ record: KeyRecord }>('SELECT record FROM flagops_keys ORDER BY position'),
      ];
      const current = keys.rows.map((row) => row.record);
      const record = current.find((k) => k.id === id && k.org === org);
      if (!record) return undefined;
      const { replacement, rotatedAt, graceEndsAt } = plan(record, {
        organisations: organisations.rows.map((row) => ({ name: row.name, createdAt: row.created_at })),
        keys: current,
      });
      const old: KeyRecord = { ...record, rotatedAt, replacedBy: replacement.id, graceEndsAt };
      await client.query('UPDATE flagops_keys SET record = $3 WHERE id = $1 AND org = $2', [id, org, old]);
      await client.query('INSERT INTO flagops_keys (id, org, record) VALUES ($1, $2, $3)', [replacement.id, replacement.org, replacement]);
      return { old, replacement };
    });
  }

  /** The fingerprint is kept apart from the pepper (flagops_secrets), so a pepper restored or changed alone is told. */
  async matchPepper(check: string): Promise<void> {
    const recordedCheck = "SELECT value FROM flagops_pepper_checks WHERE hashes = 'keys'";
    if ((await this.db.query<{ value: string }>(recordedCheck)).rows[0]?.value === check) return;
    await this.db.transaction([], async (client) => {
      await lockForTransaction(client, 'keys');
      const recorded = (await client.query<{ value: string }>(recordedCheck)).rows[0]?.value;
      if (recorded === check) return;
      const { rows } = await client.query<{ some: boolean }>('SELECT EXISTS (SELECT 1 FROM flagops_keys) AS some');
      if (recorded !== undefined && rows[0]?.some) {
        throw new StateFileError(
          "the pepper in the database's flagops_secrets is not the one the keys in flagops_keys were hashed with (changed, or restored from another backup): every key would be refused; restore the database from one backup",
        );
      }
      await client.query(
        "INSERT INTO flagops_pepper_checks (hashes, value) VALUES ('keys', $1) ON CONFLICT (hashes) DO UPDATE SET value = EXCLUDED.value",
        [check],
      );
    });
  }

  onChange(listener: () => void): Unsubscribe {
    return this.feed.onChange('keys', listener);
  }
}
