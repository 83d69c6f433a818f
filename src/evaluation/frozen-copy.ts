import type { JsonValue } from '../model/index.js';

/**
 * A deep, frozen copy of a flag value. Results hand out the compiled value itself (the hot path allocates
 * only the result object), so it must be immune to callers mutating it and to later edits of the snapshot.
 */
export function frozenCopy(value: JsonValue | undefined): JsonValue {
  if (value === undefined) return null;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as JsonValue;
  const copy: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value)) {
    // JSON may carry a "__proto__" key; a plain assignment would set the copy's prototype instead.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: frozenCopy(value[key]), enumerable: true, writable: true, configurable: true });
    else copy[key] = frozenCopy(value[key]);
  }
  return Object.freeze(copy);
}
