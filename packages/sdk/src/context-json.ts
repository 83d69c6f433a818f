/**
 * The context as remote mode sends it (and caches results under): JSON with sorted keys. A value that is not
 * JSON (NaN, ±Infinity, a bigint, a Date, a cycle) matches no operator locally, so it is sent as 1e999, which
 * the server reads as Infinity and no operator matches; objects are sent with their own keys only.
 */

const UNMATCHABLE = '1e999';

export function contextJson(value: unknown): string {
  return write(value, []);
}

function write(value: unknown, enclosing: object[]): string {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : UNMATCHABLE;
    case 'object':
      break;
    default:
      return UNMATCHABLE; // bigint, function, symbol, and undefined inside an array
  }
  if (value === null) return 'null';
  if (enclosing.includes(value)) return UNMATCHABLE;
  enclosing.push(value);
  let text: string;
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (let i = 0; i < value.length; i++) items.push(write(value[i], enclosing));
    text = `[${items.join(',')}]`;
  } else {
    const entries: string[] = [];
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record).sort()) {
      if (record[key] !== undefined) entries.push(`${JSON.stringify(key)}:${write(record[key], enclosing)}`);
    }
    text = `{${entries.join(',')}}`;
  }
  enclosing.pop();
  return text;
}
