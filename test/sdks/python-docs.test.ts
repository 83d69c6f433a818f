import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTHON_MISSING, PYTHON_SDK, ROOT, runTool } from '../helpers/sdk-tools.js';
import { type SdkHarness, startSdkHarness } from '../sdk/sdk-harness.js';
import { tourFlags } from '../sdk/tour-data.js';
import { tempDir } from './sdk-fixture.js';

/** docs/sdk-python.md's ```python blocks marked `<!-- snippet: NAME -->`, with the output the docs show. */
function snippets() {
  const text = readFileSync(path.join(ROOT, 'docs', 'sdk-python.md'), 'utf8');
  const outputs = new Map<string, string>();
  for (const m of text.matchAll(/<!-- output: ([\w-]+) -->\s*```text\n([\s\S]*?)```/g)) outputs.set(m[1], m[2]);
  return [...text.matchAll(/<!-- snippet: ([\w-]+) -->\s*```python\n([\s\S]*?)```/g)].map((m) => ({
    name: m[1],
    code: m[2],
    output: outputs.get(m[1]),
  }));
}

describe.skipIf(PYTHON_MISSING !== null)('the Python code in docs/sdk-python.md, on the README tour’s flags', () => {
  let h: SdkHarness;
  let tmp: { dir: string; remove: () => Promise<void> };
  beforeAll(async () => {
    h = await startSdkHarness(tourFlags());
    tmp = await tempDir('flagops-python-docs-');
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
    await tmp?.remove();
  });

  it('has the quick start', () => {
    expect(snippets().map((s) => s.name)).toContain('python-quick-start');
  });

  for (const snippet of snippets()) {
    it(`runs ${snippet.name} and prints what the docs say`, async () => {
      const file = path.join(tmp.dir, `${snippet.name}.py`);
      await writeFile(file, snippet.code.replaceAll('http://127.0.0.1:4001', h.service.evalUrl));
      const ran = await runTool('python3', [file], {
        cwd: tmp.dir,
        env: { ...process.env, PYTHONPATH: PYTHON_SDK, FLAGOPS_SDK_KEY: h.key, PYTHONDONTWRITEBYTECODE: '1' },
        timeoutMs: 60_000,
      });
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).toBe(snippet.output);
    }, 90_000);
  }
});
