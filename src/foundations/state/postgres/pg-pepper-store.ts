import { StateFileError } from '../../state-files/state-files.js';
import type { PepperStore } from '../pepper-store.js';
import type { Database } from './database.js';
import { readSecret, secretMadeOnce } from './pg-secret.js';

const PEPPER_BYTES = 32;

/** The pepper in flagops_secrets, apart from the key hashes, as the files keep it in a file of its own. */
export class PgPepperStore implements PepperStore {
  constructor(private readonly db: Database) {}

  async get({ mayCreate }: { mayCreate: boolean }): Promise<Buffer> {
    const pepper = await readSecret(this.db, 'pepper');
    if (pepper && pepper.length < PEPPER_BYTES) {
      throw new StateFileError(
        `the pepper in the database's flagops_secrets is damaged: expected ${PEPPER_BYTES} bytes, found ${pepper.length}; every key in flagops_keys is hashed with it: restore the database from a backup`,
      );
    }
    if (pepper) return pepper;
    if (!mayCreate) {
      throw new StateFileError(
        "the pepper is missing from the database's flagops_secrets but flagops_keys holds keys hashed with it; restore the database from a backup",
      );
    }
    return secretMadeOnce(this.db, 'pepper', PEPPER_BYTES);
  }
}
