import type { EvaluationContext as OpenFeatureContext } from '@openfeature/core';
import { setOwn } from '../evaluation/index.js';
import type { EvaluationContext } from '../model/index.js';

/**
 * OpenFeature's context in flagops' shape: `targetingKey` is the userId (it drives bucketing), every other
 * field an attribute. Dates become ISO strings, as they would on the wire, so that local and remote
 * evaluation see the same value.
 */
export function toFlagopsContext(context: OpenFeatureContext | undefined): EvaluationContext {
  if (context === undefined) return {};
  const attributes: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(context)) {
    if (name !== 'targetingKey') setOwn(attributes, name, value instanceof Date ? value.toISOString() : value);
  }
  const { targetingKey } = context;
  return typeof targetingKey === 'string' && targetingKey !== '' ? { userId: targetingKey, attributes } : { attributes };
}
