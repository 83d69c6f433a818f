import type { EvaluationContext } from '../model/index.js';
import type { CompiledCondition } from './operators.js';

/**
 * The value a condition tests (contract §4): `context.attributes[attribute]`, except that `userId` reads
 * `context.userId` first, the identity that also drives bucketing, so a rule on userId and the bucket agree
 * on who the user is; `attributes.userId` is the fallback when `context.userId` is absent.
 * Only own properties are attributes: a context without "constructor" has no such attribute, and one sent
 * with "__proto__" (JSON may carry it) has that attribute.
 */
export function readAttribute(context: EvaluationContext, c: CompiledCondition): unknown {
  if (c.readsUserId) {
    const userId = context.userId;
    if (userId !== undefined) return userId;
  }
  const attributes = context.attributes;
  if (attributes == null) return undefined;
  return c.ownOnly && !Object.hasOwn(attributes, c.attribute) ? undefined : attributes[c.attribute];
}
