export * from './evaluation-counter.js';
export * from './hours.js';
export * from './stats-scope.js';
