/**
 * The pure evaluation core (contract §4), shared by the evaluation server and the SDKs. No I/O, no clock,
 * no Node-only API: it runs unchanged in browsers.
 */
export { bucket } from './bucket.js';
export { CompiledEnvironment, compileEnvironment } from './compile-environment.js';
export { type ConditionTrace, type EvaluationExplanation, type EvaluationStep, explainEvaluation } from './explain.js';
export { murmur3_32 } from './murmur3.js';
export { setOwn } from './own-property.js';
export { isJsonScalar } from './scalar.js';
export { compareSemver, parseSemver, type Semver } from './semver.js';
