import type { ControlState } from '../../../src/foundations/state/index.js';
import { PROMPTLY_MS } from '../../helpers/deadlines.js';

/**
 * An implementation of the control plane's state, for the contract suites: every implementation runs the same
 * suites (test/state/file-state.test.ts runs them against the files of a data directory).
 */
export interface StateSubject {
  /** A new, empty state. */
  fresh(): Promise<StateHandle>;
}

export interface StateHandle {
  state: ControlState;
  /** Another instance over the same state: what a restart opens, or a second control plane beside the first. */
  another(): Promise<ControlState>;
}

/** Resolves once `listener`-style `onChange` has been called, or fails after PROMPTLY_MS. */
export function announced(onChange: (listener: () => void) => () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no change announced within ${PROMPTLY_MS} ms`));
    }, PROMPTLY_MS);
    const stop = onChange(() => {
      clearTimeout(timer);
      stop();
      resolve();
    });
  });
}
