import type { EvaluationContext } from '../model/index.js';

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
  for (const field in context) if (field !== 'userId' && field !== 'attributes') return `unknown field context.${field}; expected userId and attributes`;
  return null;
}
