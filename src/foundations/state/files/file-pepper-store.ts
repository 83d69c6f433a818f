import { mkdir } from 'node:fs/promises';
import { loadPepper } from '../../auth/key-hash.js';
import type { PepperStore } from '../pepper-store.js';

/** `<stateDir>/pepper`: in a file of its own (mode 0600), so a leaked keys.json alone does not let anyone test guesses. */
export class FilePepperStore implements PepperStore {
  constructor(private readonly stateDir: string) {}

  async get({ mayCreate }: { mayCreate: boolean }): Promise<Buffer> {
    if (mayCreate) await mkdir(this.stateDir, { recursive: true, mode: 0o700 });
    return loadPepper(this.stateDir, mayCreate);
  }
}
