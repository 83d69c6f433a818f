import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatRefs } from '../../src/apps/cli/refs/format-refs.js';
import { flagops, sampleCopy } from './cli-harness.js';

/**
 * `flagops refs` on the sample flags repository (project shop: checkout-v2, max-cart-items, search-ranking, and
 * holiday-banner, archived), with search-ranking given an expiry that has passed, and a small source tree.
 */
describe('flagops refs', () => {
  let flags: { dir: string; remove: () => void };
  let src: string;

  const write = (root: string, files: Record<string, string>) => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
  };

  beforeAll(() => {
    flags = sampleCopy();
    appendFileSync(join(flags.dir, 'projects/shop/flags/search-ranking.yaml'), 'lifecycle:\n  type: experiment\n  expiresAt: 2020-06-30\n');
    appendFileSync(join(flags.dir, 'projects/shop/flags/checkout-v2.yaml'), 'lifecycle:\n  type: release\n  expiresAt: 2999-12-31\n');
    src = mkdtempSync(join(tmpdir(), 'flagops-refs-cli-'));
    write(src, {
      '.gitignore': 'dist/\n',
      'web/checkout.ts':
        "import { client } from './flags';\n\nif (client.boolean('checkout-v2', false)) show();\nclient.boolean('checkout-v3', false);\n",
      'api/search.py': 'ranking = client.string("search-ranking", "classic")\n',
      'api/banner.go': 'package api\n\nvar banner = client.JSON("holiday-banner", nil, ctx)\n',
      'dist/bundle.js': "client.boolean('checkout-v2', false);client.boolean('nope', false)\n",
    });
  });
  afterAll(() => {
    flags?.remove();
    if (src) rmSync(src, { recursive: true, force: true });
  });

  const refs = (...args: string[]) => flagops(['refs', '--dir', src, '--flags', flags.dir, ...args]);

  it('prints every flag with its status and references, and the unknown keys, as JSON', async () => {
    const { code, stdout, stderr } = await refs('--format', 'json');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(stdout)).toEqual({
      flags: [
        { key: 'checkout-v2', status: 'active', references: [{ file: 'web/checkout.ts', line: 3 }] },
        { key: 'holiday-banner', status: 'stale', references: [{ file: 'api/banner.go', line: 3 }] },
        { key: 'max-cart-items', status: 'active', references: [] },
        { key: 'search-ranking', status: 'stale', references: [{ file: 'api/search.py', line: 1 }] },
      ],
      unknownKeys: [{ key: 'checkout-v3', file: 'web/checkout.ts', line: 4 }],
    });
  });

  it('prints text grouped per flag, then unknown keys and a summary naming stale flags still referenced', async () => {
    const { code, stdout } = await refs();
    expect(code).toBe(0);
    expect(stdout).toBe(`checkout-v2 (active): 1 reference
  web/checkout.ts:3
holiday-banner (stale): 1 reference
  api/banner.go:3
max-cart-items (active): no references
search-ranking (stale): 1 reference
  api/search.py:1

Unknown keys (passed to an SDK evaluation call, but no flag has them):
  checkout-v3  web/checkout.ts:4

4 flags, 3 referenced; 2 flags not active but still referenced: holiday-banner (stale), search-ranking (stale); 1 unknown key; 4 files scanned
`);
  });

  it('exits 1 with --fail-on-unknown when there is an unknown key, 0 when there is none', async () => {
    expect((await refs('--fail-on-unknown')).code).toBe(1);
    const clean = mkdtempSync(join(tmpdir(), 'flagops-refs-clean-'));
    try {
      write(clean, { 'a.ts': "client.boolean('checkout-v2', false);\n" });
      const { code, stdout } = await flagops(['refs', '--dir', clean, '--flags', flags.dir, '--fail-on-unknown', '--format', 'json']);
      expect(code).toBe(0);
      expect(JSON.parse(stdout).unknownKeys).toEqual([]);
    } finally {
      rmSync(clean, { recursive: true, force: true });
    }
  });

  it('reads the current directory for both by default, and leaves the flags repository’s own files out', async () => {
    const mono = mkdtempSync(join(tmpdir(), 'flagops-refs-mono-'));
    try {
      cpSync(join(flags.dir, 'projects'), join(mono, 'projects'), { recursive: true });
      write(mono, { 'app/main.ts': "client.boolean('checkout-v2', false);\n" });
      // The repository's files name every key; a quoted one there is not a use in code.
      write(mono, { 'projects/shop/flags/README.txt': '"checkout-v2"\n' });
      const { code, stdout } = await flagops(['refs', '--format', 'json'], mono);
      expect(code).toBe(0);
      expect(JSON.parse(stdout).flags[0]).toEqual({ key: 'checkout-v2', status: 'active', references: [{ file: 'app/main.ts', line: 1 }] });
    } finally {
      rmSync(mono, { recursive: true, force: true });
    }
  });

  it('takes only one project’s flags with --project; a key of another project is then unknown', async () => {
    const other = join(flags.dir, 'projects/blog');
    write(other, {
      'project.yaml': 'name: Blog\nslug: blog\n',
      'flags/comments.yaml': 'key: comments\nkind: boolean\n',
      ...Object.fromEntries(
        ['dev', 'staging', 'prod'].map((e) => [
          `environments/${e}/comments.yaml`,
          'enabled: false\nrolloutPct: 0\nvalueOn: true\nvalueOff: false\n',
        ]),
      ),
    });
    const tree = mkdtempSync(join(tmpdir(), 'flagops-refs-project-'));
    try {
      write(tree, { 'a.ts': "client.boolean('comments', false);\n" });
      const all = JSON.parse((await flagops(['refs', '--dir', tree, '--flags', flags.dir, '--format', 'json'])).stdout);
      expect(all.flags.map((f: { key: string }) => f.key)).toEqual(['checkout-v2', 'comments', 'max-cart-items', 'search-ranking']);
      expect(all.unknownKeys).toEqual([]);
      const shop = await flagops(['refs', '--dir', tree, '--flags', flags.dir, '--project', 'shop', '--format', 'json']);
      expect(JSON.parse(shop.stdout).unknownKeys).toEqual([{ key: 'comments', file: 'a.ts', line: 1 }]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('still knows a flag whose file has issues, as active, and says the repository has issues', async () => {
    const repo = sampleCopy();
    const tree = mkdtempSync(join(tmpdir(), 'flagops-refs-issues-'));
    try {
      appendFileSync(join(repo.dir, 'projects/shop/flags/search-ranking.yaml'), 'colour: blue\n');
      write(tree, { 'a.py': 'client.string("search-ranking", "classic")\n' });
      const { code, stdout, stderr } = await flagops(['refs', '--dir', tree, '--flags', repo.dir, '--format', 'json']);
      expect(code).toBe(0);
      expect(stderr).toMatch(/the flags repository has 1 issue\(s\) \('flagops validate' names them\)/);
      const report = JSON.parse(stdout);
      expect(report.flags.find((f: { key: string }) => f.key === 'search-ranking')).toEqual({
        key: 'search-ranking',
        status: 'active',
        references: [{ file: 'a.py', line: 1 }],
      });
      expect(report.unknownKeys).toEqual([]);
    } finally {
      repo.remove();
      rmSync(tree, { recursive: true, force: true });
    }
  });

  it('exits 1 when the flags repository or the project cannot be read', async () => {
    const noRepo = await flagops(['refs', '--dir', src, '--flags', src]);
    expect(noRepo.code).toBe(1);
    expect(noRepo.stderr).toMatch(/has no projects\/ folder/);
    const noProject = await refs('--project', 'nope');
    expect(noProject.code).toBe(1);
    expect(noProject.stderr).toMatch(/has no project nope/);
  });

  it('exits 2 on a wrong command line, with the help', async () => {
    for (const args of [['--format', 'xml'], ['--dir', '/no/such/dir'], ['extra'], ['--bogus']]) {
      const { code, stderr } = await refs(...args);
      expect(code, args.join(' ')).toBe(2);
      expect(stderr).toMatch(/Usage: flagops refs/);
    }
  });

  it('exits 2 on a --health that is no http(s) origin, naming it', async () => {
    const { code, stderr } = await flagops(['refs', '--dir', src, '--flags', flags.dir, '--health', 'notaurl'], undefined, {
      FLAGOPS_API_KEY: 'x',
    });
    expect(code).toBe(2);
    expect(stderr).toContain(`--health must be the control plane's http(s) origin`);
  });

  it('has a --help, and flagops --help lists it', async () => {
    const help = await flagops(['refs', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: flagops refs \[--dir <source tree>\] \[--flags <flags repository>\] \[--project <slug>\]/);
    expect(help.stdout).toMatch(/--fail-on-unknown/);
    expect((await flagops(['--help'])).stdout).toMatch(/^ {2}refs +find where source code uses each flag/m);
  });
});

describe('the text summary', () => {
  it('names the first ten flags not active but still referenced, and counts the rest', () => {
    const flags = Array.from({ length: 12 }, (_, i) => ({
      key: `old-${String(i).padStart(2, '0')}`,
      status: 'stale' as const,
      references: [{ file: 'a.ts', line: i + 1 }],
    }));
    const last = formatRefs({ report: { flags, unknownKeys: [] }, filesScanned: 1 })
      .trimEnd()
      .split('\n')
      .pop();
    expect(last).toBe(
      `12 flags, 12 referenced; 12 flags not active but still referenced: ${flags
        .slice(0, 10)
        .map((f) => `${f.key} (stale)`)
        .join(', ')} and 2 more; 0 unknown keys; 1 file scanned`,
    );
  });
});
