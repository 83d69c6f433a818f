/**
 * The context as remote mode sends it to POST /v1/evaluate, and the key its results are cached under: JSON with
 * object keys sorted, so that equal contexts have the same text.
 *
 * Local mode evaluates the caller's values themselves, and a value that is not JSON (NaN, ±Infinity, a bigint, a
 * function, a Date, a reference back to an enclosing object) matches no operator there. The server must see a
 * value that matches no operator either: such a value is sent as 1e999, which the server reads as Infinity, and
 * an object is sent with its own enumerable keys only (a Date as {}). JSON.stringify would send NaN as null,
 * which `eq null` matches, use a Date's toJSON string, and throw at a bigint or a cycle. An `undefined` entry of
 * an object is left out, as JSON.stringify leaves it out: both modes read it as a missing attribute.
 */

/** A number literal JSON.parse reads as Infinity: no operator matches it, as none matches NaN locally. */
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
