export * from './flagops-error.js';
export * from './http-status.js';
export * from './kinds.js';
