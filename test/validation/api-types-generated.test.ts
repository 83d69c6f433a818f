import { readFileSync } from 'node:fs';
import type * as core from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, generateApiTypes, readSchemas } from '../../scripts/generate-api-types.mjs';
import type * as wire from '../../src/foundations/validation/api-types.generated.js';
import { API_SCHEMAS } from '../../src/foundations/validation/index.js';

/** True when A and B are the same type (not merely assignable one way). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

// Checked by the compiler (npm run lint): the schemas' enums are the core's.
const agree: [
  Same<wire.Operator, core.Operator>,
  Same<wire.SegmentOperator, core.SegmentOperator>,
  Same<wire.EnvironmentName, core.EnvironmentName>,
  Same<wire.FlagKind, core.FlagKind>,
  Same<wire.JsonValue, core.JsonValue>,
] = [true, true, true, true, true];

const API = 'https://flagops.dev/schemas/api/';

/** One body schema `thing` with these properties, for the generator alone. */
function body(properties: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    'api/thing.schema.json': {
      $id: `${API}thing.schema.json`,
      title: 'POST /things',
      type: 'object',
      additionalProperties: false,
      properties,
      ...extra,
    },
  };
}

/** A list of at most `max` items whose items are checked only up to `guard` (if/then, as the schemas write it). */
function guardedList(max: number, guard: number, items: unknown) {
  return { type: 'array', maxItems: max, if: { maxItems: guard }, ...Object.fromEntries([['then', { items }]]) };
}

describe('src/foundations/validation/api-types.generated.ts', () => {
  it('is what scripts/generate-api-types.mjs writes from the schemas now', () => {
    expect(agree).not.toContain(false);
    const committed = readFileSync(new URL(`../../${API_TYPES_FILE}`, import.meta.url), 'utf8');
    expect(committed, 'run `node scripts/generate-api-types.mjs` after changing a schema').toBe(generateApiTypes(readSchemas()));
  });

  it('has a body type for every schema of schemas/api/', () => {
    const names = Object.keys(readSchemas()).flatMap((file) => /^api\/(.+)\.schema\.json$/.exec(file)?.[1] ?? []);
    expect([...API_SCHEMAS].sort()).toEqual(names.sort());
  });
});

describe('the generator', () => {
  it('types required and optional fields, enums, nulls, lists and nested objects', () => {
    const text = generateApiTypes(
      body(
        {
          name: { type: 'string', minLength: 1, description: 'What it is called.' },
          size: { enum: ['s', 'm'] },
          tags: { type: 'array', maxItems: 3, items: { type: 'string' } },
          at: { type: 'object', additionalProperties: false, properties: { x: { type: 'integer' } } },
          data: true,
          gone: { anyOf: [{ type: 'null' }, { type: 'boolean' }] },
        },
        { required: ['name'] },
      ),
    );
    expect(text).toContain(
      [
        '/** POST /things */',
        'export interface ThingBody {',
        '  /** What it is called. */',
        '  name: string;',
        "  size?: 's' | 'm';",
        '  tags?: string[];',
        '  at?: { x?: number };',
        '  data?: JsonValue;',
        '  gone?: null | boolean;',
        '}',
      ].join('\n'),
    );
    expect(text).toContain("export const API_SCHEMAS = ['thing'] as const;");
  });

  it('takes the items of a list checked only within its size limit (if maxItems, then items)', () => {
    const text = generateApiTypes(body({ ids: guardedList(5, 5, { type: 'number' }) }));
    expect(text).toContain('  ids?: number[];');
  });

  it('refuses what it cannot type rather than guess: an unknown keyword, a size guard below the limit', () => {
    expect(() => generateApiTypes(body({ x: { type: 'object', patternProperties: {} } }))).toThrow(/patternProperties/);
    expect(() => generateApiTypes(body({ ids: guardedList(9, 5, true) }))).toThrow(/api\/thing\.schema\.json.*ids/);
  });
});
