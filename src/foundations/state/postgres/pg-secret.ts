import { randomBytes } from 'node:crypto';
import type { Database } from './database.js';

/** The secret `name` of flagops_secrets, or null when there is none. */
export async function readSecret(db: Database, name: string): Promise<Buffer | null> {
  const { rows } = await db.query<{ value: Buffer }>('SELECT value FROM flagops_secrets WHERE name = $1', [name]);
  return rows[0]?.value ?? null;
}

/** The secret `name`, made of `bytes` random bytes unless it exists; of two instances making it at once, both get the one kept. */
export async function secretMadeOnce(db: Database, name: string, bytes: number): Promise<Buffer> {
  await db.query('INSERT INTO flagops_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, randomBytes(bytes)]);
  const secret = await readSecret(db, name);
  if (!secret) throw new Error(`flagops_secrets lost ${name} while it was being made`);
  return secret;
}
