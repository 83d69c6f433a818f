import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument, stringify } from 'yaml';
import { readSimpleYaml } from '../../src/foundations/repository/fast-yaml.js';
import { parseRepositoryFile, serializeRepositoryFile } from '../../src/foundations/repository/index.js';

const SAMPLE = new URL('../../flags/', import.meta.url).pathname;

function sampleTexts(dir = join(SAMPLE, 'projects')): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? sampleTexts(full) : [readFileSync(full, 'utf8')];
  });
}

/** A deterministic pseudo-random stream, so a failure reproduces. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** What the yaml package reads, or undefined when it reports an error. */
function yamlValue(text: string): unknown {
  const doc = parseDocument(text, { prettyErrors: false });
  return doc.errors.length > 0 ? undefined : doc.toJS();
}

/** The property under test: when the fast reader answers, yaml reads the text without error and to the same value. */
function expectAgreement(text: string): boolean {
  const fast = readSimpleYaml(text);
  if (fast === undefined) return false;
  const doc = parseDocument(text, { prettyErrors: false });
  expect(doc.errors, text).toEqual([]);
  expect(fast, text).toStrictEqual(doc.toJS());
  return true;
}

const TOKENS = [
  ' ',
  '  ',
  '-',
  '- ',
  ':',
  ': ',
  '#',
  ' # c',
  '"',
  "'",
  '[',
  ']',
  ',',
  '{',
  '}',
  '{}',
  '[]',
  '\n',
  '\n  ',
  '\n- ',
  '&a ',
  '*a',
  '!x ',
  '|',
  '>',
  '~',
  'null',
  'Null',
  'true',
  'False',
  'yes',
  'on',
  '0x1F',
  '0o17',
  '1e3',
  '.5',
  '5.',
  '007',
  '-0',
  '+5',
  '-5',
  '1.2.3',
  '.inf',
  '-.inf',
  '.nan',
  '\\',
  '\\n',
  '\\x41',
  '\\u00e9',
  "''",
  '---',
  '...',
  '%',
  '@',
  '`',
  '?',
  '? ',
  'é',
  '日本',
  '__proto__',
  '\t',
  '\r\n',
  'a: b',
  ': x',
  '12345678901234567890',
];

describe('the fast YAML reader', () => {
  it.each([
    ['', null],
    ['# only a comment\n', null],
    ['a: 1\nb: -2.5\nc: true\nd: null\nf:\ng: text with spaces\n', { a: 1, b: -2.5, c: true, d: null, f: null, g: 'text with spaces' }],
    ["list: [DE, \"F,R\", 'it''s', 1, null]\n", { list: ['DE', 'F,R', "it's", 1, null] }],
    ['rules:\n- id: a\n  serve: on\nnext: 1\n', { rules: [{ id: 'a', serve: 'on' }], next: 1 }],
    [
      'v: 4.2.0\nw: "4.2"\nx: yes\ny: http://example.com/a?b=c\nz: "\\u00e9\\n"\n',
      { v: '4.2.0', w: '4.2', x: 'yes', y: 'http://example.com/a?b=c', z: 'é\n' },
    ],
  ])('reads %j as yaml does', (text, expected) => {
    expect(readSimpleYaml(text)).toStrictEqual(expected);
    expect(yamlValue(text)).toStrictEqual(expected);
  });

  it.each([
    'a: &x 1\nb: *x\n',
    'a: |\n  text\n',
    'a: 0x1F\n',
    'a: ~\n',
    'a: 1e3\n',
    'a: .inf\n',
    'a: b # comment\n',
    'a: one\n  two\n',
    'a: 1\na: 2\n',
    'true: 1\n',
    '---\na: 1\n',
    'a: [1, [2]]\n',
    'a:\tb\n',
    'a: 1\r\n',
  ])('leaves %j to yaml', (text) => {
    expect(readSimpleYaml(text)).toBeUndefined();
  });

  // JavaScript's trim() also removes U+00A0 and the other Unicode spaces; in YAML they are content.
  it.each([
    ['a: \u00a0\n', { a: '\u00a0' }],
    ['a: x\u3000\nb: 1\n', { a: 'x\u3000', b: 1 }],
    ['list: [x, \u2003]\n', { list: ['x', '\u2003'] }],
    ['- \u00a0\n', ['\u00a0']],
  ])('keeps Unicode spaces that yaml keeps: %j', (text, expected) => {
    expect(yamlValue(text)).toStrictEqual(expected);
    expect([undefined, expected]).toContainEqual(readSimpleYaml(text));
  });

  it('reads every sample file and every serialized file itself, so loading a large repository stays fast', () => {
    for (const text of sampleTexts()) {
      expect(readSimpleYaml(text), text).not.toBeUndefined();
      expect(expectAgreement(text)).toBe(true);
    }
    const serialized = serializeRepositoryFile(
      parseRepositoryFile('projects/shop/environments/prod/x.yaml', sampleTexts().find((t) => t.includes('rules:\n  -'))!).file!,
    );
    expect(expectAgreement(serialized)).toBe(true);
  });

  it('agrees with yaml on 4,000 mutated sample files, whenever it answers', () => {
    const random = rng(20250301);
    const corpus = sampleTexts();
    let answered = 0;
    for (let i = 0; i < 4000; i++) {
      let text = corpus[Math.floor(random() * corpus.length)];
      const edits = 1 + Math.floor(random() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(random() * (text.length + 1));
        const choice = random();
        if (choice < 0.6) text = text.slice(0, at) + TOKENS[Math.floor(random() * TOKENS.length)] + text.slice(at);
        else if (choice < 0.85) text = text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 4));
        else {
          // Re-indent a line: the commonest hand-editing slip.
          const lineStart = text.lastIndexOf('\n', at - 1) + 1;
          text = `${text.slice(0, lineStart)}${' '.repeat(Math.floor(random() * 3))}${text.slice(lineStart)}`;
        }
      }
      if (expectAgreement(text)) answered++;
    }
    // Guard against a vacuous pass: a good share of mutants must still take the fast path.
    expect(answered).toBeGreaterThan(800);
  });

  it('agrees with yaml on 2,000 generated documents written by yaml itself', () => {
    const random = rng(7);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
    const strings = [
      'DE',
      'a b',
      'on',
      'yes',
      'No',
      '1.2.3',
      '4.1.0-rc.1',
      '@example.com',
      'true',
      '0',
      '-1',
      '1e3',
      'null',
      '',
      ' x',
      'x ',
      "it's",
      'a: b',
      '#x',
      'é',
      '- x',
      '[x]',
      'a,b',
      'http://x/y',
    ];
    const scalars: unknown[] = [...strings, 0, 1, -3, 2.5, 100, 0.2, true, false, null];
    const keys = ['id', 'key', 'enabled', 'rolloutPct', 'value', 'checkout-v2', 'search.ranking', 'a_b', '9lives'];
    const generate = (depth: number): unknown => {
      const r = random();
      if (depth > 3 || r < 0.45) return pick(scalars);
      if (r < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => generate(depth + 1));
      const out: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 4); i > 0; i--) out[pick(keys)] = generate(depth + 1);
      return out;
    };
    let answered = 0;
    for (let i = 0; i < 2000; i++) {
      const root: Record<string, unknown> = {};
      for (let k = 1 + Math.floor(random() * 4); k > 0; k--) root[pick(keys)] = generate(0);
      const text = stringify(root, { flowCollectionPadding: random() < 0.5, indentSeq: random() < 0.5, indent: random() < 0.5 ? 2 : 4 });
      if (expectAgreement(text)) answered++;
    }
    expect(answered).toBeGreaterThan(600);
  });
});
