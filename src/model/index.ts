export * from './environments.js';
export * from './operators.js';
export * from './reasons.js';
export * from './types.js';
