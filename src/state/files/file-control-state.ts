import path from 'node:path';
import type { ControlState } from '../control-state.js';
import { FileKeyStore } from './file-key-store.js';
import { FilePepperStore } from './file-pepper-store.js';

/**
 * The control plane's state as files of the data directory (docs/architecture.md, "On disk"). Nothing is read
 * or written until a store is used; the state directory is created (mode 0700) by the first write.
 */
export class FileControlState implements ControlState {
  readonly keys: FileKeyStore;
  readonly pepper: FilePepperStore;

  constructor(dataDir: string) {
    const stateDir = path.join(dataDir, 'state');
    this.keys = new FileKeyStore(stateDir);
    this.pepper = new FilePepperStore(stateDir);
  }
}
