import type { JsonValue } from '../types.js';

/** A value as people read it in a table cell: compact JSON, long ones shortened. */
export function shortValue(value: JsonValue, max = 60): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
