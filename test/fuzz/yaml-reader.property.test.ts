/**
 * The repository's YAML reader: readSimpleYaml (src/foundations/repository/fast-yaml.ts) is a hand-written fast path,
 * and parseRepositoryFile falls back to the `yaml` package whenever it declines. For any text, the fast
 * path must give exactly what `yaml` gives, or decline; and parsing a file must never throw, whatever the
 * file holds. Texts come from our own serializer, from `yaml.stringify` with assorted options, from random
 * tokens, and from random edits of all of these.
 */
import { deepStrictEqual } from 'node:assert/strict';
import type { JsonValue } from '@flagops/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDocument, stringify, type ToStringOptions } from 'yaml';
import { readSimpleYaml } from '../../src/foundations/repository/fast-yaml.js';
import { type ParsedFile, parseRepositoryFile, serializeRepositoryFile } from '../../src/foundations/repository/index.js';
import { anyString, environmentConfig, finiteNumber, flagKey, jsonValue, TRICKY_STRINGS } from './arbitraries.js';
import { runs } from './fuzz-settings.js';

/**
 * The property: when the fast path answers, `yaml` reads the text without error, to the same value.
 * (node's deepStrictEqual, not toStrictEqual, which takes an own `constructor` key for the object's class.)
 */
function expectAgreement(text: string): boolean {
  const fast = readSimpleYaml(text);
  if (fast === undefined) return false;
  const doc = parseDocument(text, { prettyErrors: false });
  expect(doc.errors, text).toEqual([]);
  deepStrictEqual(fast, doc.toJS(), text);
  return true;
}

const PATHS = [
  'projects/shop/project.yaml',
  'projects/shop/flags/checkout-v2.yaml',
  'projects/shop/environments/prod/checkout-v2.yaml',
  'projects/shop/environments/dev/kills.yaml',
];

const timestamp = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString());
const name = anyString.filter((s) => s.length > 0);
const id = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,20}$/);

/** Files as the control plane would write them: every field in the order and form normalize.ts gives. */
const parsedFile: fc.Arbitrary<{ path: string; file: ParsedFile }> = fc.oneof(
  fc
    .record({ id, name, slug: fc.constant('shop') }, { noNullPrototype: true })
    .map((value) => ({ path: PATHS[0], file: { kind: 'project', value } as ParsedFile })),
  fc
    .record(
      {
        id,
        key: flagKey,
        name,
        description: anyString,
        kind: fc.constant('json' as const),
        defaultValue: jsonValue(),
        archivedAt: fc.option(timestamp),
      },
      { requiredKeys: ['id', 'key', 'kind', 'archivedAt'], noNullPrototype: true },
    )
    .map(({ id, key, name, description, kind, defaultValue, archivedAt }) => {
      const value = { id, key } as Extract<ParsedFile, { kind: 'flag' }>['value'];
      if (name !== undefined) value.name = name;
      if (description !== undefined) value.description = description;
      value.kind = kind;
      if (defaultValue !== undefined) value.defaultValue = defaultValue;
      value.archivedAt = archivedAt;
      return { path: `projects/shop/flags/${key}.yaml`, file: { kind: 'flag', value } as ParsedFile };
    }),
  environmentConfig().map((value) => ({ path: PATHS[2], file: { kind: 'config', value } as ParsedFile })),
  fc
    .dictionary(
      flagKey,
      fc.record(
        { killedAt: timestamp, killedBy: name.filter((s) => s.length <= 256), reason: anyString },
        { requiredKeys: ['killedAt', 'killedBy'], noNullPrototype: true },
      ),
      { maxKeys: 3, noNullPrototype: true },
    )
    .map((kills) => {
      const sorted: Record<string, (typeof kills)[string]> = {};
      for (const key of Object.keys(kills).sort()) sorted[key] = kills[key];
      return { path: PATHS[3], file: { kind: 'kills', value: { kills: sorted } } as ParsedFile };
    }),
);

const serializedFile = parsedFile.map(({ file }) => serializeRepositoryFile(file));

/** yaml.stringify's formatting options, in assorted combinations. */
const stringifyOptions: fc.Arbitrary<ToStringOptions> = fc.record(
  {
    indent: fc.integer({ min: 1, max: 4 }),
    indentSeq: fc.boolean(),
    flowCollectionPadding: fc.boolean(),
    lineWidth: fc.constantFrom(0, 20, 80),
    minContentWidth: fc.constantFrom(0, 20),
    defaultStringType: fc.constantFrom(
      'PLAIN' as const,
      'QUOTE_DOUBLE' as const,
      'QUOTE_SINGLE' as const,
      'BLOCK_LITERAL' as const,
      'BLOCK_FOLDED' as const,
    ),
    defaultKeyType: fc.constantFrom(null, 'PLAIN' as const, 'QUOTE_DOUBLE' as const, 'QUOTE_SINGLE' as const),
    singleQuote: fc.constantFrom(null, true, false),
    doubleQuotedAsJSON: fc.boolean(),
    collectionStyle: fc.constantFrom('any' as const, 'block' as const, 'flow' as const),
    nullStr: fc.constantFrom('null', '~', '', 'Null'),
    trueStr: fc.constantFrom('true', 'True'),
    falseStr: fc.constantFrom('false', 'FALSE'),
  },
  { requiredKeys: [] },
);

/** Structured documents written by yaml itself: a mapping at the root, as every repository file has. */
const stringifiedDocument = fc
  .tuple(
    fc.dictionary(
      fc.oneof(flagKey, anyString),
      fc.oneof(
        jsonValue(),
        finiteNumber.map((n): JsonValue => n),
      ),
      { minKeys: 1, maxKeys: 5, noNullPrototype: true },
    ),
    stringifyOptions,
  )
  .map(([value, options]) => stringify(value, options));

const TOKENS = [
  ...TRICKY_STRINGS,
  '  ',
  '- ',
  ': ',
  ' # c',
  '"',
  "'",
  '[',
  ']',
  ', ',
  '{',
  '}',
  '{}',
  '[]',
  '\n',
  '\n  ',
  '\n- ',
  '\n    ',
  '&a ',
  '*a',
  '!x ',
  '!!str ',
  '|-',
  '>+',
  '\\x41',
  '\\u00e9',
  "''",
  '%YAML 1.2\n',
  '? ',
  'key: value',
  'list: [a, b]',
  '\r',
  '\u0000',
];

const tokenText = fc
  .array(fc.oneof(fc.constantFrom(...TOKENS), fc.string({ maxLength: 3 }), fc.string({ unit: 'binary', maxLength: 2 })), { maxLength: 30 })
  .map((parts) => parts.join(''));

type Edit =
  | { at: number; kind: 'insert'; token: string }
  | { at: number; kind: 'delete'; length: number }
  | { at: number; kind: 'indent'; width: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    at: fc.nat(),
    kind: fc.constant('insert' as const),
    token: fc.oneof(fc.constantFrom(...TOKENS), fc.string({ maxLength: 2 })),
  }),
  fc.record({ at: fc.nat(), kind: fc.constant('delete' as const), length: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ at: fc.nat(), kind: fc.constant('indent' as const), width: fc.integer({ min: 1, max: 3 }) }),
);

/** Hand-editing slips: a token typed in, a few characters deleted, a line indented. */
function applyEdits(text: string, edits: Edit[]): string {
  let out = text;
  for (const e of edits) {
    const at = e.at % (out.length + 1);
    if (e.kind === 'insert') out = out.slice(0, at) + e.token + out.slice(at);
    else if (e.kind === 'delete') out = out.slice(0, at) + out.slice(at + e.length);
    else {
      const lineStart = out.lastIndexOf('\n', at - 1) + 1;
      out = out.slice(0, lineStart) + ' '.repeat(e.width) + out.slice(lineStart);
    }
  }
  return out;
}

const mutatedText = fc
  .tuple(fc.oneof(serializedFile, stringifiedDocument), fc.array(edit, { minLength: 1, maxLength: 4 }))
  .map(([text, edits]) => applyEdits(text, edits));

/** Every kind of text the reader may meet. */
const anyText = fc.oneof(serializedFile, stringifiedDocument, tokenText, mutatedText);

describe('the fast YAML reader, for any text', () => {
  it('gives the value yaml gives, or declines, on what our serializer writes; and reads most of it itself', () => {
    let answered = 0;
    let total = 0;
    fc.assert(
      fc.property(serializedFile, (text) => {
        total++;
        if (expectAgreement(text)) answered++;
      }),
      runs({ test: 200, fuzz: 20_000 }),
    );
    // The fast path exists for these files: it must not quietly decline them all (the generated strings are
    // mostly hard ones, which it leaves to yaml, so a fifth is the floor here).
    expect(answered / total).toBeGreaterThan(0.2);
  });

  it('gives the value yaml gives, or declines, on documents written by yaml.stringify with assorted options', () => {
    fc.assert(
      fc.property(stringifiedDocument, (text) => {
        expectAgreement(text);
      }),
      runs({ test: 300, fuzz: 30_000 }),
    );
  });

  it('gives the value yaml gives, or declines, on random tokens and on edited documents', () => {
    fc.assert(
      fc.property(fc.oneof(tokenText, mutatedText), (text) => {
        expectAgreement(text);
      }),
      runs({ test: 500, fuzz: 50_000 }),
    );
  });
});

/** `value` with every -0 in it as 0. */
function withoutNegativeZero<T>(value: T): T {
  if (Object.is(value, -0)) return 0 as T;
  if (Array.isArray(value)) return value.map(withoutNegativeZero) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, withoutNegativeZero(v)])) as T;
  }
  return value;
}

describe('parsing a repository file', () => {
  it('gives back exactly the file the serializer wrote', () => {
    fc.assert(
      fc.property(parsedFile, ({ path, file }) => {
        const text = serializeRepositoryFile(file);
        const parsed = parseRepositoryFile(path, text);
        expect(parsed.issues, text).toEqual([]);
        // The serializer writes -0 as 0 (a rolloutPct of -0 is 0), so that is what reads back.
        deepStrictEqual(parsed.file, withoutNegativeZero(file), text);
      }),
      runs({ test: 200, fuzz: 20_000 }),
    );
  });

  it('never throws, whatever the text: a file is either parsed or reported with issues', () => {
    fc.assert(
      fc.property(anyText, fc.constantFrom(...PATHS), (text, path) => {
        const parsed = parseRepositoryFile(path, text);
        expect(parsed.file !== undefined || parsed.issues.length > 0, text).toBe(true);
      }),
      runs({ test: 300, fuzz: 30_000 }),
    );
  });
});
