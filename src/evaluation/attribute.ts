import type { EvaluationContext } from '../model/index.js';
import type { CompiledCondition } from './operators.js';

/**
 * The value a condition tests (contract §4): `context.attributes[attribute]`, except that `userId` reads
 * `context.userId` first, the identity that also drives bucketing, so a rule on userId and the bucket agree
 * on who the user is; `attributes.userId` is the fallback when `context.userId` is absent.
 * Inherited properties (e.g. "constructor") are functions or objects, which every operator rejects.
 */
export function readAttribute(context: EvaluationContext, c: CompiledCondition): unknown {
  if (c.readsUserId) {
    const userId = context.userId;
    if (userId !== undefined) return userId;
  }
  const attributes = context.attributes;
  return attributes == null ? undefined : attributes[c.attribute];
}
