/**
 * @flagops/core: the flagops data model and the pure evaluation core, shared by the evaluation server and the
 * SDKs. No I/O, no clock, no platform API: it runs unchanged in Node and in browsers.
 */

export { CompiledEnvironment, compileEnvironment, type FlagChanges } from './evaluate.js';
export {
  type ConditionTrace,
  type EvaluationExplanation,
  type EvaluationStep,
  type ExplanationEnvironment,
  explainEvaluation,
  type PrerequisiteTrace,
  type SegmentTrace,
  type VariantTrace,
} from './explain.js';
export { canonicalJson, frozenCopy, isJsonScalar, setOwn } from './json.js';
export * from './model.js';
export { bucket, murmur3_32 } from './murmur3.js';
export * from './reasons.js';
export { compareSemver, parseSemver, type Semver } from './semver.js';
