import type { SdkLogger } from './types.js';

const PREFIX = '[flagops]';

/** Warnings and errors to the console when there is one (browsers, Node); never anything else. */
export const consoleLogger: SdkLogger = {
  warn: (message, fields) => {
    if (typeof console !== 'undefined') console.warn(PREFIX, message, fields ?? '');
  },
  error: (message, fields) => {
    if (typeof console !== 'undefined') console.error(PREFIX, message, fields ?? '');
  },
};

/** A logger that drops everything (for tests and for callers who log elsewhere). */
export const silentSdkLogger: SdkLogger = { warn: () => {}, error: () => {} };
