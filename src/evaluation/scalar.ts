/** A JSON scalar (contract §4 eq/neq): string, finite number, boolean or null. NaN and ±Infinity are not JSON. */
export function isJsonScalar(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}
