import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GO_ENV, GO_MISSING, GO_SDK, PYTHON_MISSING, PYTHON_SDK, ROOT, runTool } from '../helpers/sdk-tools.js';
import { flagops, SAMPLE } from './cli-harness.js';

/** `tsc --strict` (ES2022, Node's module resolution) on one file of `dir`, as an application would compile it. */
function typeCheck(dir: string, file: string) {
  const tsc = path.join(ROOT, 'node_modules', '.bin', 'tsc');
  const args = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck'];
  return runTool(tsc, [...args, path.join(dir, file)], { cwd: dir });
}

/** The sample repository's project `shop` as a snapshot's flags, as an SDK would load it (prod, no rules). */
const SNAPSHOT = {
  version: 1,
  environment: 'prod',
  flags: {
    'checkout-v2': {
      enabled: true,
      rolloutPct: 100,
      valueOn: true,
      valueOff: false,
      rules: [],
      killed: false,
      archived: false,
      defaultValue: false,
    },
    'search-ranking': {
      enabled: false,
      rolloutPct: 0,
      valueOn: 'neural',
      valueOff: 'classic',
      rules: [],
      killed: false,
      archived: false,
      defaultValue: 'classic',
    },
    'max-cart-items': {
      enabled: true,
      rolloutPct: 100,
      valueOn: 50,
      valueOff: 20,
      rules: [],
      killed: false,
      archived: false,
      defaultValue: 20,
    },
    'holiday-banner': {
      enabled: true,
      rolloutPct: 100,
      valueOn: { show: true },
      valueOff: { show: false },
      rules: [],
      killed: false,
      archived: true,
      defaultValue: { show: false },
    },
  },
};

describe('flagops generate', () => {
  // Inside the checkout, so that the TypeScript file resolves @flagops/sdk from its node_modules.
  let dir: string;
  beforeAll(async () => {
    await mkdir(path.join(ROOT, 'test-artifacts'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, 'test-artifacts', 'generate-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a missing --lang or --project, and a project the repository lacks', async () => {
    expect((await flagops(['generate', '--project', 'shop', '--dir', SAMPLE])).code).toBe(2);
    expect((await flagops(['generate', '--lang', 'rust', '--project', 'shop', '--dir', SAMPLE])).code).toBe(2);
    expect((await flagops(['generate', '--lang', 'ts', '--dir', SAMPLE])).code).toBe(2);
    const missing = await flagops(['generate', '--lang', 'ts', '--project', 'nope', '--dir', SAMPLE]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no project nope');
  });

  it('names --dir or --out, and what to give instead, when the one cannot be read or the other written', async () => {
    const notDir = await flagops([
      'generate',
      '--lang',
      'ts',
      '--project',
      'shop',
      '--dir',
      path.join(SAMPLE, 'projects', 'shop', 'project.yaml'),
    ]);
    expect(notDir.code).toBe(1);
    expect(notDir.stderr).toMatch(
      /^flagops generate: --dir .*project\.yaml is not a directory that can be read; give the flags repository's root\n$/,
    );
    const intoDir = await flagops(['generate', '--lang', 'ts', '--project', 'shop', '--dir', SAMPLE, '--out', dir]);
    expect(intoDir).toMatchObject({
      code: 1,
      stderr: `flagops generate: --out ${dir} is a directory; give the path of a file to write; nothing was written\n`,
    });
    const noFolder = path.join(dir, 'missing', 'flags.ts');
    const intoNothing = await flagops(['generate', '--lang', 'ts', '--project', 'shop', '--dir', SAMPLE, '--out', noFolder]);
    expect(intoNothing.code).toBe(1);
    expect(intoNothing.stderr).toBe(
      `flagops generate: --out ${noFolder}: its folder does not exist; make it first, or give another path; nothing was written\n`,
    );
  });

  it('writes one accessor per flag, typed from its kind, defaulting to its defaultValue, documented', async () => {
    const { code, stdout } = await flagops(['generate', '--lang', 'ts', '--project', 'shop', '--dir', SAMPLE]);
    expect(code).toBe(0);
    expect(stdout).toContain('checkoutV2(context?: EvaluationContext): boolean {');
    expect(stdout).toContain('return this.client.boolean("checkout-v2", false, context);');
    expect(stdout).toContain('maxCartItems(context?: EvaluationContext): number {');
    expect(stdout).toContain('return this.client.number("max-cart-items", 20, context);');
    expect(stdout).toContain('searchRanking(context?: EvaluationContext): string {');
    expect(stdout).toContain('return this.client.json("holiday-banner", {"show":false}, context);');
    expect(stdout).toContain('The new one-page checkout.');
    expect(stdout).toContain('@deprecated the flag is archived');
  });

  it('TypeScript: the file type-checks against @flagops/sdk, and a wrong use does not', async () => {
    const out = path.join(dir, 'shop-flags.ts');
    expect((await flagops(['generate', '--lang', 'ts', '--project', 'shop', '--dir', SAMPLE, '--out', out])).code).toBe(0);
    await writeFile(
      path.join(dir, 'use.ts'),
      `import { createClient } from '@flagops/sdk';
import { ShopFlags } from './shop-flags.js';
const client = createClient({ evalUrl: 'http://127.0.0.1:1', sdkKey: 'svc_sdk_x', bootstrap: ${JSON.stringify(SNAPSHOT)} as never });
const flags = new ShopFlags(client);
const on: boolean = flags.checkoutV2({ userId: 'user-1' });
const items: number = flags.maxCartItems();
const ranking: string = flags.searchRanking();
console.log(JSON.stringify([on, items, ranking, flags.holidayBanner()]));
await client.close();
// @ts-expect-error a boolean flag is not a string
const wrong: string = flags.checkoutV2();
`,
    );
    const checked = await typeCheck(dir, 'use.ts');
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    // Without the expectation of an error the wrong use is reported: the check can fail.
    await writeFile(
      path.join(dir, 'wrong.ts'),
      `import { ShopFlags } from './shop-flags.js';\nexport const s: string = new ShopFlags(null as never).checkoutV2();\n`,
    );
    const wrong = await typeCheck(dir, 'wrong.ts');
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout).toContain("Type 'boolean' is not assignable to type 'string'");
  }, 120_000);

  it.skipIf(PYTHON_MISSING !== null)(
    'Python: the module imports against sdks/python and its accessors serve the flags',
    async () => {
      const out = path.join(dir, 'shop_flags.py');
      expect((await flagops(['generate', '--lang', 'python', '--project', 'shop', '--dir', SAMPLE, '--out', out])).code).toBe(0);
      const script = `
import json
from flagops import Client
from shop_flags import ShopFlags
client = Client("http://127.0.0.1:9", "svc_sdk_x", bootstrap=json.loads(${JSON.stringify(JSON.stringify(SNAPSHOT))}), stream=False, retry_initial=60, retry_max=60)
flags = ShopFlags(client)
print(json.dumps([flags.checkout_v2({"userId": "user-1"}), flags.max_cart_items(), flags.search_ranking(), flags.holiday_banner()]))
client.close()
`;
      const ran = await runTool('python3', ['-c', script], {
        cwd: dir,
        env: { ...process.env, PYTHONPATH: `${PYTHON_SDK}:${dir}`, PYTHONDONTWRITEBYTECODE: '1' },
      });
      expect(ran.code, ran.stderr).toBe(0);
      expect(JSON.parse(ran.stdout)).toEqual([true, 50, 'classic', { show: false }]);
    },
    60_000,
  );

  it.skipIf(GO_MISSING !== null)(
    'Go: the file builds and passes go vet against sdks/go, gofmt-clean',
    async () => {
      const module = path.join(dir, 'gomod');
      await mkdir(path.join(module, 'flags'), { recursive: true });
      const out = path.join(module, 'flags', 'shop.go');
      expect((await flagops(['generate', '--lang', 'go', '--project', 'shop', '--dir', SAMPLE, '--out', out])).code).toBe(0);
      await writeFile(
        path.join(module, 'go.mod'),
        `module example.com/app\n\ngo 1.19\n\nrequire github.com/flagops/flagops/sdks/go v0.0.0\n\nreplace github.com/flagops/flagops/sdks/go => ${GO_SDK}\n`,
      );
      const vet = await runTool('go', ['vet', './...'], { cwd: module, env: GO_ENV });
      expect(vet.code, vet.stderr).toBe(0);
      const fmt = await runTool('gofmt', ['-l', '.'], { cwd: module, env: GO_ENV });
      expect(fmt.stdout.trim()).toBe('');
    },
    300_000,
  );

  describe('keys whose accessor names clash with a member, a keyword or each other', () => {
    // In key order: `a-b`, `a-b-2` and `a.b` give one name in Python and two in TS and Go; the others give a
    // member of the generated class (client, constructor, toString), a keyword (class) or a method go vet checks.
    const KEYS = ['a-b', 'a-b-2', 'a.b', 'class', 'client', 'constructor', 'read-byte', 'to-string'];
    /** A string flag per key serving its own key, so that each accessor shows which flag it reads. */
    const snapshot = {
      version: 1,
      environment: 'prod',
      flags: Object.fromEntries(
        KEYS.map((key) => [
          key,
          { enabled: true, rolloutPct: 100, valueOn: key, valueOff: 'off', rules: [], killed: false, archived: false, defaultValue: 'off' },
        ]),
      ),
    };
    let repo: string;
    beforeAll(async () => {
      repo = path.join(dir, 'clash-repo');
      const project = path.join(repo, 'projects', 'chg');
      await mkdir(path.join(project, 'flags'), { recursive: true });
      await writeFile(path.join(project, 'project.yaml'), 'name: Clashing keys\nslug: chg\n');
      for (const key of KEYS) {
        await writeFile(path.join(project, 'flags', `${key}.yaml`), `key: ${key}\nkind: string\ndefaultValue: "off"\narchivedAt: null\n`);
        for (const env of ['dev', 'staging', 'prod']) {
          await mkdir(path.join(project, 'environments', env), { recursive: true });
          await writeFile(
            path.join(project, 'environments', env, `${key}.yaml`),
            `enabled: true\nrolloutPct: 100\nvalueOn: "${key}"\nvalueOff: "off"\nversion: 1\nrules: []\n`,
          );
        }
      }
    });

    it('TypeScript: the later key gets a suffix and reserved names a trailing _, and the file type-checks', async () => {
      const out = path.join(dir, 'chg-flags.ts');
      expect((await flagops(['generate', '--lang', 'ts', '--project', 'chg', '--dir', repo, '--out', out])).code).toBe(0);
      const code = await readFile(out, 'utf8');
      for (const [name, key] of [
        ['aB', 'a-b'],
        ['aB2', 'a-b-2'],
        ['aB_2', 'a.b'],
        ['class', 'class'],
        ['client_', 'client'],
        ['constructor_', 'constructor'],
        ['toString_', 'to-string'],
      ])
        expect(code).toContain(
          `  ${name}(context?: EvaluationContext): string {\n    return this.client.string("${key}", "off", context);`,
        );
      await writeFile(
        path.join(dir, 'use-chg.ts'),
        `import { createClient } from '@flagops/sdk';
import { ChgFlags } from './chg-flags.js';
const client = createClient({ evalUrl: 'http://127.0.0.1:1', sdkKey: 'svc_sdk_x', bootstrap: ${JSON.stringify(snapshot)} as never });
const flags = new ChgFlags(client);
const served: string[] = [flags.aB(), flags.aB2(), flags.aB_2(), flags.class(), flags.client_(), flags.constructor_(), flags.readByte(), flags.toString_()];
console.log(JSON.stringify(served), String(flags), Object.hasOwn(flags, 'client'), flags.hasOwnProperty('client'));
await client.close();
`,
      );
      const checked = await typeCheck(dir, 'use-chg.ts');
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    }, 120_000);

    it.skipIf(PYTHON_MISSING !== null)(
      'Python: each accessor reads its own flag, and the client stays the client',
      async () => {
        const out = path.join(dir, 'chg_flags.py');
        expect((await flagops(['generate', '--lang', 'python', '--project', 'chg', '--dir', repo, '--out', out])).code).toBe(0);
        const script = `
import json

from flagops import Client
from chg_flags import ChgFlags
client = Client("http://127.0.0.1:9", "svc_sdk_x", bootstrap=json.loads(${JSON.stringify(JSON.stringify(snapshot))}), stream=False, retry_initial=60, retry_max=60)
flags = ChgFlags(client)
ctx = {"userId": "u-1"}
print(json.dumps([flags.a_b(ctx), flags.a_b_2(ctx), flags.a_b_3(ctx), flags.class_(ctx), flags.client_(ctx), flags.constructor(ctx), flags.read_byte(ctx), flags.to_string(ctx), flags.client is client]))
client.close()
`;
        const ran = await runTool('python3', ['-c', script], {
          cwd: dir,
          env: { ...process.env, PYTHONPATH: `${PYTHON_SDK}:${dir}`, PYTHONDONTWRITEBYTECODE: '1' },
        });
        expect(ran.code, ran.stderr).toBe(0);
        // a-b-2 keeps a_b_2, its own name, so a.b, the later of the two keys named a_b, takes a_b_3.
        expect(JSON.parse(ran.stdout)).toEqual(['a-b', 'a-b-2', 'a.b', 'class', 'client', 'constructor', 'read-byte', 'to-string', true]);
      },
      60_000,
    );

    it.skipIf(GO_MISSING !== null)(
      'Go: the file builds and passes go vet, with Client the field and Client_ the flag',
      async () => {
        const module = path.join(dir, 'gomod-chg');
        await mkdir(path.join(module, 'flags'), { recursive: true });
        const out = path.join(module, 'flags', 'chg.go');
        expect((await flagops(['generate', '--lang', 'go', '--project', 'chg', '--dir', repo, '--out', out])).code).toBe(0);
        const code = await readFile(out, 'utf8');
        for (const [name, key] of [
          ['AB', 'a-b'],
          ['AB2', 'a-b-2'],
          ['AB_2', 'a.b'],
          ['Client_', 'client'],
          ['ReadByte_', 'read-byte'],
        ])
          expect(code).toContain(`func (f ChgFlags) ${name}(ctx flagops.Context) string {\n\treturn f.Client.String("${key}", "off", ctx)`);
        await writeFile(
          path.join(module, 'go.mod'),
          `module example.com/app\n\ngo 1.19\n\nrequire github.com/flagops/flagops/sdks/go v0.0.0\n\nreplace github.com/flagops/flagops/sdks/go => ${GO_SDK}\n`,
        );
        const vet = await runTool('go', ['vet', './...'], { cwd: module, env: GO_ENV });
        expect(vet.code, vet.stderr).toBe(0);
        const fmt = await runTool('gofmt', ['-l', '.'], { cwd: module, env: GO_ENV });
        expect(fmt.stdout.trim()).toBe('');
      },
      300_000,
    );
  });
});
