/**
 * Sets `key` on `target` as an own, enumerable data property. Plain assignment of the key "__proto__" would
 * replace the object's prototype instead of adding an entry, and the entry would be lost; flag values,
 * context attributes and anything keyed by them are user JSON, which may carry that key.
 */
export function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
