export * from './flagops-error.js';
export * from './kinds.js';
export * from './http-status.js';
