/**
 * JSON values as user data: flag values, context attributes and anything keyed by them may carry any key,
 * "__proto__" included, and reach the evaluator from callers who keep their own references to them.
 */
import type { JsonValue } from './model.js';

/** A JSON scalar: string, finite number, boolean or null. NaN and ±Infinity are not JSON. */
export function isJsonScalar(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

/**
 * Sets `key` on `target` as an own, enumerable data property. Plain assignment of the key "__proto__" would
 * replace the object's prototype instead of adding an entry, and the entry would be lost.
 */
export function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

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

/**
 * JSON with object keys sorted at every level, so two values are equal exactly when their canonical texts
 * are, whatever the order of their keys. Values that JSON cannot carry are dropped as JSON.stringify drops them.
 */
export function canonicalJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
      const sorted: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) setOwn(sorted, key, (v as Record<string, unknown>)[key]);
      return sorted;
    }) ?? 'null'
  );
}
