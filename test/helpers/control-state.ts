import { type ControlState, openControlState } from '../../src/foundations/state/index.js';

/** The control plane's state in `dataDir`, as the service opens it at start: the files of the data directory. */
export function stateIn(dataDir: string): Promise<ControlState> {
  return openControlState({ dataDir });
}
