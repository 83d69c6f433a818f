/** From a caller's arguments to what the caller gets: the context checked, the core's result shaped as details. */
import type { EvaluationContext, EvaluationResult, JsonValue } from '@flagops/core';
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
    return errorDetails(
      defaultValue,
      'TYPE_MISMATCH',
      `flag ${flagKey} is ${describe(result.value)}, not ${kind === 'object' ? 'an object' : `a ${kind}`}`,
    );
  }
  return result as EvaluationDetails<T>;
}

/**
 * Why a context cannot be evaluated, or null. The same rules as the server's POST /v1/evaluate, so that local
 * and remote mode refuse the same contexts (as INVALID_CONTEXT) instead of one evaluating what the other refuses.
 */
export function contextProblem(context: EvaluationContext | undefined | null): string | null {
  if (context === undefined || context === null) return null;
  if (typeof context !== 'object' || Array.isArray(context)) return 'the context must be an object { userId, attributes }';
  const { userId, attributes } = context;
  if (userId !== undefined && userId !== null && typeof userId !== 'string') return 'context.userId must be a string';
  if (attributes !== undefined && attributes !== null && (typeof attributes !== 'object' || Array.isArray(attributes))) {
    return 'context.attributes must be an object';
  }
  for (const field in context)
    if (field !== 'userId' && field !== 'attributes') return `unknown field context.${field}; expected userId and attributes`;
  return null;
}
