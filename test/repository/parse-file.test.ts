import { describe, expect, it } from 'vitest';
import { deriveFlagId, deriveProjectId, parseRepositoryFile, readRepositoryFiles } from '../../src/foundations/repository/index.js';
import { formatIssue } from '../../src/foundations/validation/issue.js';

const CONFIG = 'projects/shop/environments/prod/checkout-v2.yaml';

describe('parsing a repository file', () => {
  describe('its kind, from its path', () => {
    it('reads project, flag, config and kills files', () => {
      expect(parseRepositoryFile('projects/shop/project.yaml', 'name: Shop\nslug: shop\n').file?.kind).toBe('project');
      expect(parseRepositoryFile('projects/shop/flags/checkout-v2.yaml', 'key: checkout-v2\n').file?.kind).toBe('flag');
      expect(parseRepositoryFile(CONFIG, 'enabled: true\nrolloutPct: 5\nvalueOn: true\nvalueOff: false\n').file?.kind).toBe('config');
      expect(parseRepositoryFile('projects/shop/environments/prod/kills.yaml', 'kills: {}\n').file?.kind).toBe('kills');
    });

    it('ignores files outside the layout, such as a README or .gitignore', () => {
      expect(parseRepositoryFile('README.md', '# flags')).toEqual({ issues: [] });
      expect(parseRepositoryFile('.github/workflows/flags.yaml', 'on: push')).toEqual({ issues: [] });
      expect(parseRepositoryFile('projects/shop/README.md', 'notes')).toEqual({ issues: [] });
    });

    it.each([
      'projects/shop/environments/qa/checkout-v2.yaml',
      'projects/shop/flags/checkout-v2.yml',
      'projects/shop/flags/nested/checkout-v2.yaml',
      'projects/shop/settings.yaml',
    ])('reports a YAML file in an unexpected place under projects/: %s', (path) => {
      expect(parseRepositoryFile(path, 'key: x\n').issues).toEqual([
        { file: path, message: expect.stringContaining('is not part of the repository layout') },
      ]);
    });
  });

  describe('a file that cannot be read', () => {
    it.each([
      ['lists', `${'['.repeat(100_000)}${']'.repeat(100_000)}`],
      ['maps', `${'{a: '.repeat(100_000)}1${'}'.repeat(100_000)}`],
    ])('is one of %s nested far deeper than a value may be, said so rather than as a stack overflow', (_, value) => {
      const text = `enabled: true\nrolloutPct: 0\nvalueOn: ${value}\nvalueOff: false\nversion: 1\nrules: []\n`;
      const { file, issues } = parseRepositoryFile(CONFIG, text);
      expect(file).toBeUndefined();
      expect(issues).toEqual([
        {
          file: CONFIG,
          line: 3,
          column: expect.any(Number),
          message: 'is nested deeper than 64 levels: arrays and objects may nest at most 64 levels deep',
        },
      ]);
    });

    it('is one that is not UTF-8, with the line and column of the first bytes that are not', () => {
      const bytes = Buffer.concat([Buffer.from('key: checkout-v2\nname: "'), Buffer.from([0xff, 0xfe]), Buffer.from('"\n')]);
      const path = 'projects/shop/flags/checkout-v2.yaml';
      expect(parseRepositoryFile(path, bytes.toString('utf8'))).toEqual({
        issues: [{ file: path, line: 2, column: 8, message: expect.stringMatching(/^is not valid UTF-8 text/) }],
      });
      // Outside the layout, a file is not read at all.
      expect(parseRepositoryFile('projects/shop/logo.png', bytes.toString('utf8'))).toEqual({ issues: [] });
    });

    // Nine levels of nine aliases: a few hundred bytes that stand for 387 million values.
    const letters = 'abcdefghi';
    const bomb = [
      `a: &a [${Array(9).fill('"lol"').join(',')}]`,
      ...[...letters].slice(1).map((letter, i) => `${letter}: &${letter} [${Array(9).fill(`*${letters[i]}`).join(',')}]`),
    ].join('\n');

    it('is an issue naming the file and the first alias, never an exception (a YAML alias bomb)', () => {
      const result = parseRepositoryFile(CONFIG, bomb);
      expect(result.file).toBeUndefined();
      expect(result.issues).toEqual([
        { file: CONFIG, line: 2, column: 8, message: expect.stringContaining('aliases expand to too many values') },
      ]);
    });

    it('is an issue naming an alias whose anchor is not defined before it, where it is', () => {
      const text = 'enabled: &on true\nrolloutPct: 0\nvalueOn: *on\nvalueOff: *nope\nversion: 1\nrules: []\n';
      expect(parseRepositoryFile(CONFIG, text).issues).toEqual([
        {
          file: CONFIG,
          line: 4,
          column: 11,
          message: 'YAML syntax error: the alias *nope names no anchor before it (define &nope first, or write the value out)',
        },
      ]);
    });

    it('is reported, file first, by what the push check reads a pushed commit with (readRepositoryFiles)', () => {
      const { issues } = readRepositoryFiles([{ path: CONFIG, text: bomb }], null);
      expect(issues.map(formatIssue)[0]).toEqual(
        `${CONFIG}:2:8: could not be read: its YAML aliases expand to too many values (write the values out instead of using aliases)`,
      );
    });

    it('is the same for every kind of file', () => {
      for (const path of ['projects/shop/project.yaml', 'projects/shop/flags/a.yaml', 'projects/shop/environments/dev/kills.yaml']) {
        expect(parseRepositoryFile(path, bomb).issues[0]).toMatchObject({ file: path, message: expect.stringContaining('aliases') });
      }
    });
  });

  describe('YAML syntax errors', () => {
    it('are reported with file, line and column', () => {
      const { file, issues } = parseRepositoryFile(CONFIG, 'enabled: true\nrolloutPct: [10\nvalueOn: true\n');
      expect(file).toBeUndefined();
      expect(issues[0]).toMatchObject({ file: CONFIG, line: 3, column: 1, message: expect.stringMatching(/^YAML syntax error: /) });
    });

    it('include duplicate keys', () => {
      const { issues } = parseRepositoryFile(CONFIG, 'enabled: true\nrolloutPct: 10\nrolloutPct: 20\n');
      expect(issues).toEqual([{ file: CONFIG, line: 3, column: 1, message: expect.stringContaining('unique') }]);
    });

    it('include a second document in the file', () => {
      expect(parseRepositoryFile(CONFIG, 'enabled: true\n---\nenabled: false\n').issues[0]).toMatchObject({ file: CONFIG, line: 2 });
    });
  });

  describe('schema errors', () => {
    it('name the file and the JSON path, with the line and column of the offending value', () => {
      const text = [
        'enabled: true',
        'rolloutPct: 50',
        'valueOn: true',
        'valueOff: false',
        'rules:',
        '  - id: beta',
        '    serve: on',
        '    conditions:',
        '      - attribute: plan',
        '        op: in',
        '        value: beta',
        '',
      ].join('\n');
      expect(parseRepositoryFile(CONFIG, text).issues).toEqual([
        {
          file: CONFIG,
          path: '/rules/0/conditions/0/value',
          line: 11,
          column: 16,
          message: 'must be an array of strings, numbers, booleans or nulls for op "in"',
        },
      ]);
    });

    it('point a missing field at the mapping that lacks it', () => {
      const text = 'enabled: true\nrolloutPct: 50\nvalueOn: true\nvalueOff: false\nrules:\n  - serve: on\n';
      expect(parseRepositoryFile(CONFIG, text).issues).toEqual([
        { file: CONFIG, path: '/rules/0/id', line: 6, column: 5, message: 'is required' },
      ]);
    });

    it('are listed in the order of the file', () => {
      const text = 'enabled: 1\nrolloutPct: 500\nvalueOn: true\nvalueOff: false\n';
      expect(parseRepositoryFile(CONFIG, text).issues.map((i) => i.line)).toEqual([1, 2]);
    });

    it('refuse .inf and .nan, which JSON cannot carry', () => {
      const { issues } = parseRepositoryFile(CONFIG, 'enabled: true\nrolloutPct: 5\nvalueOn: .inf\nvalueOff: false\n');
      expect(issues).toEqual([
        { file: CONFIG, path: '/valueOn', line: 3, column: 10, message: 'must be a finite number (JSON has no .inf or .nan)' },
      ]);
    });

    it('refuse a version past the largest integer a JSON client reads exactly, where versions would stop moving', () => {
      const at = (version: string) =>
        parseRepositoryFile(CONFIG, `enabled: true\nrolloutPct: 5\nvalueOn: true\nvalueOff: false\nversion: ${version}\n`);
      expect(at('9007199254740991').issues).toEqual([]);
      expect(at('9007199254740993').issues).toEqual([
        { file: CONFIG, path: '/version', line: 5, column: 10, message: expect.stringContaining('9007199254740991') },
      ]);
    });
  });

  describe('a file over 1 MiB', () => {
    it('is refused as a push is, whatever way it came (the git host, an import), once and by its size', () => {
      const text = `key: checkout-v2\ndescription: ${'é'.repeat(600 * 1024)}\n`;
      expect(parseRepositoryFile('projects/shop/flags/checkout-v2.yaml', text)).toEqual({
        issues: [{ file: 'projects/shop/flags/checkout-v2.yaml', message: '1.2 MiB is over the limit of 1 MiB per file' }],
      });
      // Up to the limit, in bytes of UTF-8, the file is read.
      const under = `key: checkout-v2\ndescription: ${'x'.repeat(1024 * 1024 - 40)}\n`;
      expect(parseRepositoryFile('projects/shop/flags/checkout-v2.yaml', under).issues.map((issue) => issue.message)).not.toContainEqual(
        expect.stringContaining('over the limit'),
      );
    });
  });

  it('reads YAML 1.2: on, off, yes and no are strings, and a dotted version stays a string', () => {
    const text =
      'enabled: true\nrolloutPct: 5\nvalueOn: yes\nvalueOff: no\nrules:\n  - id: r\n    serve: on\n    conditions:\n      - attribute: v\n        op: semver_gt\n        value: 4.2.0\n';
    const parsed = parseRepositoryFile(CONFIG, text);
    expect(parsed.issues).toEqual([]);
    expect(parsed.file?.value).toMatchObject({
      valueOn: 'yes',
      valueOff: 'no',
      rules: [{ serve: 'on', conditions: [{ value: '4.2.0' }] }],
    });
  });

  describe('an empty file', () => {
    it('is a valid kills.yaml, as are `kills:` and `kills: {}`: nothing killed', () => {
      for (const text of ['', '\n', '# no kills\n', 'kills:\n', 'kills: {}\n']) {
        expect(parseRepositoryFile('projects/shop/environments/dev/kills.yaml', text)).toEqual({
          file: { kind: 'kills', value: { kills: {} } },
          issues: [],
        });
      }
    });

    it('is refused for the other kinds', () => {
      expect(parseRepositoryFile(CONFIG, '').issues).toEqual([{ file: CONFIG, line: 1, column: 1, message: 'the file is empty' }]);
    });
  });

  describe('defaults and ids', () => {
    it('derives a project id from the slug when the file has none: prj_ + 16 hex of sha1(slug)', () => {
      const parsed = parseRepositoryFile('projects/shop/project.yaml', 'name: Shop\nslug: shop\n');
      expect(parsed.file?.value).toEqual({ id: 'prj_5042d146667518a1', name: 'Shop', slug: 'shop' });
      expect(deriveProjectId('shop')).toBe('prj_5042d146667518a1');
    });

    it('derives a flag id from project slug and key when the file has none: flg_ + 16 hex of sha1("<slug>/<key>")', () => {
      const parsed = parseRepositoryFile('projects/shop/flags/checkout-v2.yaml', 'key: checkout-v2\n');
      expect(deriveFlagId('shop', 'checkout-v2')).toBe('flg_204eaf85c7816425');
      expect(parsed.file?.value).toEqual({
        id: deriveFlagId('shop', 'checkout-v2'),
        key: 'checkout-v2',
        kind: 'boolean',
        archivedAt: null,
      });
      expect(deriveFlagId('shop', 'checkout-v2')).not.toBe(deriveFlagId('web', 'checkout-v2'));
    });

    it('keeps an id written in the file', () => {
      expect(parseRepositoryFile('projects/shop/flags/x.yaml', 'id: flg_custom\nkey: x\n').file?.value).toMatchObject({ id: 'flg_custom' });
    });

    it('fills a config with version 0 and no rules, and a rule with no conditions', () => {
      const parsed = parseRepositoryFile(
        CONFIG,
        'enabled: false\nrolloutPct: 0\nvalueOn: true\nvalueOff: false\nrules:\n  - id: all\n    serve: off\n',
      );
      expect(parsed.file?.value).toEqual({
        enabled: false,
        rolloutPct: 0,
        valueOn: true,
        valueOff: false,
        version: 0,
        rules: [{ id: 'all', serve: 'off', conditions: [] }],
      });
    });
  });
});
