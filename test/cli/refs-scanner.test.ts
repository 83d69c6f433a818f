import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRefs } from '../../src/apps/cli/refs/find-refs.js';
import { expired, offlineStatusOf } from '../../src/apps/cli/refs/flag-status.js';
import { isIgnored, parseGitignore } from '../../src/apps/cli/refs/gitignore.js';
import { scanText } from '../../src/apps/cli/refs/scan-text.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A source tree in a temp dir: path → content. */
function tree(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(tmpdir(), 'flagops-refs-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** The files that reference `checkout-v2` in a tree, in the order reported. */
function scanned(dir: string, keys = ['checkout-v2']) {
  return findRefs({ dir, catalog: { listed: keys, known: new Set(keys) }, statusOf: () => 'active' });
}
const filesOf = (dir: string) => scanned(dir).report.flags[0].references.map((r) => r.file);

const USE = "client.boolean('checkout-v2', false)\n";

describe('the gitignore matcher', () => {
  const ignored = (patterns: string, path: string, isDir = false, base = '') => isIgnored([parseGitignore(patterns, base)], path, isDir);

  it('matches a pattern without a slash against the name at any depth', () => {
    expect(ignored('*.log\n', 'a/b/debug.log')).toBe(true);
    expect(ignored('*.log\n', 'a/b/debug.txt')).toBe(false);
    expect(ignored('secret.ts\n', 'deep/down/secret.ts')).toBe(true);
  });

  it('anchors a pattern with a leading or inner slash to the directory of its .gitignore', () => {
    expect(ignored('/build\n', 'build', true)).toBe(true);
    expect(ignored('/build\n', 'src/build', true)).toBe(false);
    expect(ignored('docs/out\n', 'docs/out', true)).toBe(true);
    expect(ignored('docs/out\n', 'x/docs/out', true)).toBe(false);
    expect(ignored('/gen.ts\n', 'pkg/gen.ts', false, 'pkg')).toBe(true);
    expect(ignored('/gen.ts\n', 'pkg/sub/gen.ts', false, 'pkg')).toBe(false);
  });

  it('matches a pattern ending in a slash against directories only', () => {
    expect(ignored('out/\n', 'a/out', true)).toBe(true);
    expect(ignored('out/\n', 'a/out', false)).toBe(false);
  });

  it('re-includes with !, the last matching line winning', () => {
    expect(ignored('*.log\n!keep.log\n', 'keep.log')).toBe(false);
    expect(ignored('*.log\n!keep.log\n', 'drop.log')).toBe(true);
    expect(ignored('!keep.log\n*.log\n', 'keep.log')).toBe(true);
  });

  it('reads ** as any number of directories, and *, ? and classes within one name', () => {
    expect(ignored('**/fixtures\n', 'a/b/fixtures', true)).toBe(true);
    expect(ignored('a/**/z.ts\n', 'a/z.ts')).toBe(true);
    expect(ignored('a/**/z.ts\n', 'a/b/c/z.ts')).toBe(true);
    expect(ignored('gen/**\n', 'gen/x/y.ts')).toBe(true);
    expect(ignored('src/*.ts\n', 'src/a/b.ts')).toBe(false);
    expect(ignored('file-?.txt\n', 'file-1.txt')).toBe(true);
    expect(ignored('file-[0-9].txt\n', 'file-7.txt')).toBe(true);
    expect(ignored('file-[!0-9].txt\n', 'file-7.txt')).toBe(false);
  });

  it('skips comments and blank lines, drops unescaped trailing spaces, and honours escapes', () => {
    expect(ignored('# a.ts\n\n', '# a.ts')).toBe(false);
    expect(ignored('\\#a.ts\n', '#a.ts')).toBe(true);
    expect(ignored('a.ts   \n', 'a.ts')).toBe(true);
    expect(ignored('\\!b.ts\n', '!b.ts')).toBe(true);
    expect(ignored('*.ts\r\n', 'a.ts')).toBe(true);
  });

  it('lets a deeper .gitignore override an outer one', () => {
    const files = [parseGitignore('*.gen.ts\n', ''), parseGitignore('!keep.gen.ts\n', 'pkg')];
    expect(isIgnored(files, 'pkg/keep.gen.ts', false)).toBe(false);
    expect(isIgnored(files, 'pkg/other.gen.ts', false)).toBe(true);
    expect(isIgnored(files, 'keep.gen.ts', false)).toBe(true);
  });
});

describe('scanning a source tree', () => {
  it('reports a file relative to the tree with forward slashes, and the 1-based line of each use', () => {
    const dir = tree({ 'src/app/main.ts': `// top\n\nconst a = "checkout-v2";\nconst b = 1;\n${USE}` });
    expect(scanned(dir).report.flags).toEqual([
      {
        key: 'checkout-v2',
        status: 'active',
        references: [
          { file: 'src/app/main.ts', line: 3 },
          { file: 'src/app/main.ts', line: 5 },
        ],
      },
    ]);
  });

  it('counts a quoted literal only: single, double and backtick quotes, not a key inside longer text', () => {
    const dir = tree({
      'a.py': "x = 'checkout-v2'\n",
      'b.go': 'x := `checkout-v2`\n',
      'c.md': 'the checkout-v2 flag, "checkout-v2-old", "see checkout-v2"\n',
      'd.json': '{"flag": "checkout-v2"}\n',
    });
    expect(filesOf(dir)).toEqual(['a.py', 'b.go', 'd.json']);
  });

  it('reports a line once however often it names the key', () => {
    const dir = tree({ 'a.ts': "f('checkout-v2', 'checkout-v2');\n" });
    expect(scanned(dir).report.flags[0].references).toEqual([{ file: 'a.ts', line: 1 }]);
  });

  it('skips .git, node_modules and vendored directories', () => {
    const dir = tree({
      'src/a.ts': USE,
      '.git/config.ts': USE,
      'node_modules/pkg/index.js': USE,
      'web/node_modules/pkg/index.js': USE,
      'vendor/lib/x.go': USE,
      'third_party/y.py': USE,
    });
    expect(filesOf(dir)).toEqual(['src/a.ts']);
  });

  it('skips a binary file (a NUL byte near its start) but reads text with any bytes', () => {
    const binary = Buffer.concat([Buffer.from('PNG\0'), Buffer.from(USE)]);
    const latin1 = Buffer.concat([Buffer.from([0xe9, 0xff, 0x0a]), Buffer.from(USE)]);
    const dir = tree({ 'img.png': binary, 'notes.txt': latin1, 'ok.ts': USE });
    expect(filesOf(dir)).toEqual(['notes.txt', 'ok.ts']);
    expect(scanned(dir).report.flags[0].references[0]).toEqual({ file: 'notes.txt', line: 2 });
  });

  it('skips a file over 1 MiB', () => {
    const dir = tree({ 'bundle.js': `${USE}${' '.repeat(1024 * 1024)}`, 'ok.ts': USE });
    expect(filesOf(dir)).toEqual(['ok.ts']);
  });

  it('honours .gitignore files: the root one, nested ones, negation and directory patterns', () => {
    const dir = tree({
      '.gitignore': 'dist/\n*.log\n!keep.log\n/generated.ts\n',
      'dist/bundle.js': USE,
      'src/dist/bundle.js': USE,
      'debug.log': USE,
      'keep.log': USE,
      'generated.ts': USE,
      'src/generated.ts': USE,
      'pkg/.gitignore': '*.gen.ts\n!wanted.gen.ts\nfixtures/\n',
      'pkg/a.gen.ts': USE,
      'pkg/wanted.gen.ts': USE,
      'pkg/fixtures/f.ts': USE,
      'other/a.gen.ts': USE,
    });
    expect(filesOf(dir)).toEqual(['keep.log', 'other/a.gen.ts', 'pkg/wanted.gen.ts', 'src/generated.ts']);
  });

  it('cannot re-include a file whose directory is ignored, as git', () => {
    const dir = tree({ '.gitignore': 'build/\n!build/keep.ts\n', 'build/keep.ts': USE, 'a.ts': USE });
    expect(filesOf(dir)).toEqual(['a.ts']);
  });

  it('honours .git/info/exclude', () => {
    const dir = tree({ '.git/info/exclude': 'local/\n', 'local/a.ts': USE, 'b.ts': USE });
    expect(filesOf(dir)).toEqual(['b.ts']);
  });

  it('does not follow symbolic links', () => {
    const dir = tree({ 'src/a.ts': USE });
    symlinkSync(join(dir, 'src'), join(dir, 'linked'));
    symlinkSync(join(dir, 'src/a.ts'), join(dir, 'b.ts'));
    expect(filesOf(dir)).toEqual(['src/a.ts']);
  });

  it('lists unreferenced flags with no references, and an archived flag only while it is referenced', () => {
    const dir = tree({ 'a.ts': "client.boolean('old-flag', false)\n" });
    const { report } = findRefs({
      dir,
      catalog: { listed: ['checkout-v2'], known: new Set(['checkout-v2', 'old-flag', 'gone-too']) },
      statusOf: (key) => (key === 'checkout-v2' ? 'active' : 'stale'),
    });
    expect(report).toEqual({
      flags: [
        { key: 'checkout-v2', status: 'active', references: [] },
        { key: 'old-flag', status: 'stale', references: [{ file: 'a.ts', line: 1 }] },
      ],
      unknownKeys: [],
    });
  });

  it('reports a key passed to an evaluation call that no flag has as unknown, with file and line', () => {
    const dir = tree({ 'src/a.ts': `${USE}\nclient.boolean('checkout-v3', false);\nconst label = 'checkout-v4';\n` });
    expect(scanned(dir).report.unknownKeys).toEqual([{ key: 'checkout-v3', file: 'src/a.ts', line: 3 }]);
  });
});

describe('SDK evaluation call shapes', () => {
  const unknown = (text: string, language: 'js' | 'go' | 'python') => scanText(text, new Set(), language).unknown.map((u) => u.key);

  it('JavaScript/TypeScript: the flagops SDK methods, with type arguments and across lines', () => {
    const code = [
      "client.boolean('a', false, ctx);",
      'await remote.string("b", "x");',
      'client.number(`c`, 1);',
      "client.json<Config>('d', {});",
      "client.details('e', false);",
      "client\n  .boolean(\n    'f',\n    false,\n  );",
    ].join('\n');
    expect(unknown(code, 'js')).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('JavaScript/TypeScript: OpenFeature values and details', () => {
    const code = ['getBooleanValue', 'getStringValue', 'getNumberValue', 'getObjectValue', 'getBooleanDetails', 'getObjectDetails']
      .map((m, i) => `await client.${m}('of-${i}', d);`)
      .join('\n');
    expect(unknown(code, 'js')).toEqual(['of-0', 'of-1', 'of-2', 'of-3', 'of-4', 'of-5']);
  });

  it('JavaScript: calls that are not evaluations are left alone', () => {
    const code = [
      "res.json('ok');",
      "z.string('name');",
      "boolean('a', false);",
      'client.boolean(key, false);',
      "client.boolean('has space', false);",
    ];
    expect(unknown(code.join('\n'), 'js')).toEqual([]);
  });

  it('the accessors flagops generate writes call the SDK with the key', () => {
    expect(unknown('    return this.client.boolean("checkout-v9", false, context);', 'js')).toEqual(['checkout-v9']);
    expect(unknown('\treturn f.Client.Bool("checkout-v9", false, ctx)', 'go')).toEqual(['checkout-v9']);
    expect(unknown('        return self.client.boolean("checkout-v9", False, context)', 'python')).toEqual(['checkout-v9']);
  });

  it('Go: the flagops SDK accessors and Evaluate', () => {
    const code = ['Bool', 'BoolDetails', 'String', 'StringDetails', 'Number', 'NumberDetails', 'JSON', 'JSONDetails', 'Evaluate']
      .map((m, i) => `v := client.${m}("go-${i}", def, ctx)`)
      .join('\n');
    expect(unknown(code, 'go')).toEqual(['go-0', 'go-1', 'go-2', 'go-3', 'go-4', 'go-5', 'go-6', 'go-7', 'go-8']);
  });

  it('Go: OpenFeature, the key after the context', () => {
    const code = [
      'v, err := client.BooleanValue(ctx, "of-a", false, openfeature.EvaluationContext{})',
      'd, _ := client.StringValueDetails(context.Background(), "of-b", "x", evalCtx)',
      'n := client.Int(r.Context(), `of-c`, 1, evalCtx)',
      'f, _ := client.FloatValue(context.TODO(), "of-d", 0.5, evalCtx)',
      'o := client.Object(ctx, "of-e", nil, evalCtx)',
    ].join('\n');
    expect(unknown(code, 'go')).toEqual(['of-a', 'of-b', 'of-c', 'of-d', 'of-e']);
  });

  it('Go: command-line flags of the standard library and pflag are not feature flags', () => {
    const code = [
      'port := flag.String("port", "8080", "the port")',
      'v := flag.Bool("verbose", false, "say more")',
      'cmd.Flags().String("output", "", "where")',
      'pflag.String(name, "x", "usage")',
    ].join('\n');
    expect(unknown(code, 'go')).toEqual([]);
  });

  it('Python: the flagops SDK methods, evaluate with one argument, and a keyword key', () => {
    const code = [
      'client.boolean("py-a", False)',
      "client.string('py-b', 'x', {'userId': 'u'})",
      'client.number("py-c", 1)',
      'client.json("py-d", None)',
      'client.details("py-e", False)',
      'client.evaluate("py-f")',
      'client.boolean(flag_key="py-g", default=False)',
      'response.json()',
    ].join('\n');
    expect(unknown(code, 'python')).toEqual(['py-a', 'py-b', 'py-c', 'py-d', 'py-e', 'py-f', 'py-g']);
  });

  it('Python: OpenFeature values and details', () => {
    const code = [
      'get_boolean_value',
      'get_string_value',
      'get_integer_value',
      'get_float_value',
      'get_object_value',
      'get_boolean_details',
    ]
      .map((m, i) => `client.${m}("of-${i}", d)`)
      .join('\n');
    expect(unknown(code, 'python')).toEqual(['of-0', 'of-1', 'of-2', 'of-3', 'of-4', 'of-5']);
  });

  it('reads call shapes only in the languages they belong to', () => {
    const dir = tree({ 'a.rb': "client.boolean('ruby-key', false)\n", 'b.txt': "client.boolean('text-key', false)\n" });
    expect(scanned(dir).report.unknownKeys).toEqual([]);
  });
});

describe('a flag status from the repository alone', () => {
  const now = Date.parse('2027-03-31T23:59:59Z');
  const flag = (key: string, extra: object = {}) => ({ key, id: key, kind: 'boolean' as const, archivedAt: null, ...extra });

  it('is stale once a date expiresAt has ended (the end of that day, UTC), or a date-time has passed', () => {
    expect(expired('2027-03-31', now)).toBe(false);
    expect(expired('2027-03-31', now + 1000)).toBe(true);
    expect(expired('2027-03-31T12:00:00Z', now)).toBe(true);
    expect(expired('2027-04-01T01:00:00+02:00', now)).toBe(true);
    expect(expired(undefined, now)).toBe(false);
  });

  it('is stale for an archived or expired flag, active otherwise, and the least stale for a key in two projects', () => {
    const statusOf = offlineStatusOf(
      [
        flag('fresh', { lifecycle: { type: 'release', expiresAt: '2099-01-01' } }),
        flag('expired', { lifecycle: { type: 'release', expiresAt: '2020-01-01' } }),
        flag('archived', { archivedAt: '2025-01-01T00:00:00Z' }),
        flag('shared', { archivedAt: '2025-01-01T00:00:00Z' }),
        flag('shared'),
      ],
      now,
    );
    expect(['fresh', 'expired', 'archived', 'shared'].map(statusOf)).toEqual(['active', 'stale', 'stale', 'active']);
  });
});
