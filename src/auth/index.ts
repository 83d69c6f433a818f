export * from './bearer-token.js';
export { type BootstrapEntry, MAX_SECRET_LENGTH, RECOMMENDED_SECRET_LENGTH } from './bootstrap-entry.js';
export * from './key-format.js';
export * from './key-service.js';
export * from './permissions.js';
export * from './principal.js';
