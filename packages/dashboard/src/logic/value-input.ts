import type { FlagKind, JsonValue } from '../types.js';

export type Parsed = { ok: true; value: JsonValue } | { ok: false; message: string };

/** How a value is typed in the editor: strings bare, everything else as JSON. */
export function valueToInput(kind: FlagKind, value: JsonValue): string {
  if (kind === 'string' && typeof value === 'string') return value;
  if (kind === 'json') return JSON.stringify(value, null, 2) ?? 'null';
  return JSON.stringify(value) ?? 'null';
}

/** The value an input holds for a flag of `kind`, or why it holds none. */
export function inputToValue(kind: FlagKind, text: string): Parsed {
  switch (kind) {
    case 'string':
      return { ok: true, value: text };
    case 'boolean':
      if (text === 'true' || text === 'false') return { ok: true, value: text === 'true' };
      return { ok: false, message: 'must be true or false' };
    case 'number': {
      const trimmed = text.trim();
      const n = Number(trimmed);
      if (trimmed === '' || !Number.isFinite(n)) return { ok: false, message: 'must be a number' };
      return { ok: true, value: n };
    }
    case 'json':
      try {
        return { ok: true, value: JSON.parse(text) as JsonValue };
      } catch (err) {
        return { ok: false, message: `is not valid JSON: ${(err as Error).message}` };
      }
  }
}

/** The rollout field: a number from 0 to 100 (fractions allowed, as in the API). */
export function parseRollout(text: string): Parsed {
  const trimmed = text.trim();
  const n = Number(trimmed);
  if (trimmed === '' || !Number.isFinite(n) || n < 0 || n > 100) return { ok: false, message: 'must be a number from 0 to 100' };
  return { ok: true, value: n };
}
