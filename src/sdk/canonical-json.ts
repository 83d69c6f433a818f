import { setOwn } from '../evaluation/index.js';

/**
 * JSON with object keys sorted at every level, so that two contexts that differ only in key order share a
 * remote-mode cache entry. Values that JSON cannot carry are dropped as JSON.stringify drops them.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(v).sort()) setOwn(sorted, key, (v as Record<string, unknown>)[key]);
    return sorted;
  });
}
