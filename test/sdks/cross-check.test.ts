import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { EvaluationContext } from '@flagops/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGoCommand, GO_MISSING, GO_SDK, PYTHON_MISSING, PYTHON_SDK, runTool } from '../helpers/sdk-tools.js';
import type { SdkHarness } from '../sdk/sdk-harness.js';
import { crossCheckKeys, randomContexts, serverResults, startCrossCheckService, tempDir } from './sdk-fixture.js';

/** Where an SDK's answers differ from the server's: the first few, with their contexts. */
function differences(contexts: EvaluationContext[], server: unknown[], sdk: unknown[]) {
  const out: Array<{ context: EvaluationContext; server: unknown; sdk: unknown }> = [];
  for (let i = 0; i < contexts.length && out.length < 5; i++) {
    if (JSON.stringify(sortKeys(server[i])) !== JSON.stringify(sortKeys(sdk[i])))
      out.push({ context: contexts[i], server: server[i], sdk: sdk[i] });
  }
  return out;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
  );
}

describe.skipIf(PYTHON_MISSING !== null && GO_MISSING !== null)('the Go and Python SDKs answer what POST /v1/evaluate answers', () => {
  let h: SdkHarness;
  let tmp: { dir: string; remove: () => Promise<void> };

  beforeAll(async () => {
    h = await startCrossCheckService();
    tmp = await tempDir('flagops-cross-check-');
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
    await tmp?.remove();
  });

  it.skipIf(PYTHON_MISSING !== null)(
    'python3 -m flagops evaluate, for 3000 random contexts over every flag',
    async () => {
      const contexts = randomContexts(3000, 28);
      const server = await serverResults(h, crossCheckKeys, contexts);
      const file = path.join(tmp.dir, 'contexts.jsonl');
      await writeFile(file, contexts.map((c) => JSON.stringify(c)).join('\n'));
      const args = ['-m', 'flagops', 'evaluate', '--url', h.service.evalUrl, '--sdk-key', h.key];
      const ran = await runTool('python3', [...args, '--contexts-file', file, ...crossCheckKeys], { cwd: PYTHON_SDK });
      expect(ran.code, ran.stderr).toBe(0);
      const sdk = ran.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(sdk).toHaveLength(contexts.length);
      expect(differences(contexts, server, sdk)).toEqual([]);

      // The command as applications' operators run it: one context given with --context.
      for (let i = 0; i < 5; i++) {
        const one = await runTool('python3', [...args, '--context', JSON.stringify(contexts[i]), ...crossCheckKeys], { cwd: PYTHON_SDK });
        expect(one.code, one.stderr).toBe(0);
        expect(differences([contexts[i]], [server[i]], [JSON.parse(one.stdout)])).toEqual([]);
      }
    },
    600_000,
  );

  it.skipIf(GO_MISSING !== null)(
    'go run ./cmd/flagops evaluate (built once), for 1000 random contexts over every flag',
    async () => {
      const binary = await buildGoCommand(tmp.dir);
      const contexts = randomContexts(1000, 2028);
      const server = await serverResults(h, crossCheckKeys, contexts);
      // The command takes one context a run: a few runs at a time.
      const sdk: unknown[] = new Array(contexts.length);
      let next = 0;
      const worker = async () => {
        while (next < contexts.length) {
          const i = next++;
          const ran = await runTool(
            binary,
            ['evaluate', '--url', h.service.evalUrl, '--sdk-key', h.key, '--context', JSON.stringify(contexts[i]), ...crossCheckKeys],
            { cwd: GO_SDK },
          );
          if (ran.code !== 0) throw new Error(`the Go command failed for ${JSON.stringify(contexts[i])}: ${ran.stderr}`);
          sdk[i] = JSON.parse(ran.stdout);
        }
      };
      await Promise.all(Array.from({ length: 3 }, worker));
      expect(differences(contexts, server, sdk)).toEqual([]);
    },
    600_000,
  );
});
