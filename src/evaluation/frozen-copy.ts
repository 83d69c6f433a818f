import type { JsonValue } from '../model/index.js';
import { setOwn } from './own-property.js';

/**
 * A deep, frozen copy of a flag value. Results hand out the compiled value itself (the hot path allocates
 * only the result object), so it must be immune to callers mutating it and to later edits of the snapshot.
 * Every key is copied as an own property, "__proto__" included, so the copy serializes as the original does.
 */
export function frozenCopy(value: JsonValue | undefined): JsonValue {
  if (value === undefined) return null;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as JsonValue;
  const copy: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value)) setOwn(copy, key, frozenCopy(value[key]));
  return Object.freeze(copy);
}
