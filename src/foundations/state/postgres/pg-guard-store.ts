import { failuresAfter, type GuardCheck, type GuardCheckOutcome, type GuardStore } from '../guard-store.js';
import { type Database, lockForTransaction } from './database.js';

/** Guard claims in flagops_guard_claims and last checks in flagops_guard_checks, shared by every control plane. */
export class PgGuardStore implements GuardStore {
  constructor(private readonly db: Database) {}

  async claim(org: string, id: string, now: number, until: number): Promise<boolean> {
    // One statement: of two instances claiming at once, the row lock lets one through and the other sees its claim.
    const { rowCount } = await this.db.query(
      `INSERT INTO flagops_guard_claims (org, id, held_until) VALUES ($1, $2, $4)
       ON CONFLICT (org, id) DO UPDATE SET held_until = $4 WHERE flagops_guard_claims.held_until <= $3`,
      [org, id, now, until],
    );
    return rowCount === 1;
  }

  async release(org: string, id: string): Promise<void> {
    await this.db.query('DELETE FROM flagops_guard_claims WHERE org = $1 AND id = $2', [org, id]);
  }

  async hold(org: string, id: string, until: number): Promise<void> {
    await this.db.query('UPDATE flagops_guard_claims SET held_until = $3 WHERE org = $1 AND id = $2', [org, id, until]);
  }

  record(target: string, outcome: GuardCheckOutcome): Promise<GuardCheck> {
    return this.db.transaction([], async (client) => {
      await lockForTransaction(client, `guard:${outcome.org}:${target}`);
      const { rows } = await client.query<{ record: GuardCheck }>(
        'SELECT record FROM flagops_guard_checks WHERE org = $1 AND target = $2',
        [outcome.org, target],
      );
      const check: GuardCheck = { ...outcome, failures: failuresAfter(rows[0]?.record, outcome) };
      await client.query(
        `INSERT INTO flagops_guard_checks (org, target, record) VALUES ($1, $2, $3)
         ON CONFLICT (org, target) DO UPDATE SET record = $3`,
        [outcome.org, target, check],
      );
      return check;
    });
  }

  async list(org: string): Promise<GuardCheck[]> {
    const { rows } = await this.db.query<{ record: GuardCheck }>('SELECT record FROM flagops_guard_checks WHERE org = $1', [org]);
    return rows.map((row) => row.record);
  }

  async remove(org: string, targets: readonly string[]): Promise<void> {
    if (targets.length === 0) return;
    await this.db.query('DELETE FROM flagops_guard_checks WHERE org = $1 AND target = ANY($2)', [org, [...targets]]);
    // A target's claims: its periodic ones (`<target>@<at>#<guard>`) and those of its due steps (`<target>@<at>`).
    await this.db.query("DELETE FROM flagops_guard_claims WHERE org = $1 AND split_part(id, '@', 1) = ANY($2)", [org, [...targets]]);
  }
}
