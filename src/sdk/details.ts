import type { EvaluationResult, JsonValue } from '../model/index.js';
import type { EvaluationDetails, EvaluationErrorCode } from './types.js';

/** What a getter accepts: `any` takes every JSON value, `object` an object or an array. */
export type ValueKind = 'boolean' | 'string' | 'number' | 'object' | 'any';

/** details() checks the value against the type of the caller's default; null or undefined accept anything. */
export function kindOf(defaultValue: unknown): ValueKind {
  switch (typeof defaultValue) {
    case 'boolean':
    case 'string':
    case 'number':
      return typeof defaultValue as ValueKind;
    case 'object':
      return defaultValue === null ? 'any' : 'object';
    default:
      return 'any';
  }
}

function matches(value: JsonValue, kind: ValueKind): boolean {
  if (kind === 'any') return true;
  if (kind === 'object') return typeof value === 'object' && value !== null;
  return typeof value === kind;
}

function describe(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export function errorDetails<T>(defaultValue: T, errorCode: EvaluationErrorCode, errorMessage: string): EvaluationDetails<T> {
  return { value: defaultValue, reason: 'error', errorCode, errorMessage };
}

/**
 * A core result as the caller gets it. Failures become the caller's default with reason `error`; an archived
 * flag without a defaultValue (value null) serves the caller's default, reason `archived`, as the code's
 * own fallback is the better default there. Otherwise the core's result object itself is returned: it is
 * fresh for each evaluation, so no copy is needed.
 */
export function shapeResult<T>(flagKey: string, result: EvaluationResult, defaultValue: T, kind: ValueKind): EvaluationDetails<T> {
  if (result.reason === 'flag_not_found') return errorDetails(defaultValue, 'FLAG_NOT_FOUND', `this environment has no flag ${flagKey}`);
  if (result.value === null && result.reason === 'archived') return { value: defaultValue, reason: 'archived', variation: 'default' };
  if (!matches(result.value, kind)) {
    return errorDetails(defaultValue, 'TYPE_MISMATCH', `flag ${flagKey} is ${describe(result.value)}, not ${kind === 'object' ? 'an object' : `a ${kind}`}`);
  }
  return result as EvaluationDetails<T>;
}
