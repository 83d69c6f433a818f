import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Snapshot } from '@flagops/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GO_ENV, GO_MISSING, GO_SDK, PYTHON_MISSING, PYTHON_SDK, runTool } from '../helpers/sdk-tools.js';
import { killRequest, type SdkHarness, startSdkHarness } from '../sdk/sdk-harness.js';
import { tempDir } from './sdk-fixture.js';

/** Starts from the bootstrap, waits until ready at the server's version, prints every flag's result per context. */
const PYTHON_CLIENT = `
import json, sys, time
from flagops import Client
url, key, file, version, keys = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
contexts = [None, {"userId": "user-1", "attributes": {"country": "DE", "appVersion": "2.4.0"}}]
with Client(url, key, bootstrap=json.load(open(file)), poll_interval=60) as flags:
    deadline = time.monotonic() + 10
    while not (flags.status == "ready" and flags.version == version) and time.monotonic() < deadline:
        time.sleep(0.01)
    print(json.dumps({"status": flags.status, "version": flags.version,
                      "results": [{k: flags.evaluate(k, c) for k in keys} for c in contexts]}))
`;

describe.skipIf(PYTHON_MISSING !== null && GO_MISSING !== null)(
  'the Go and Python SDKs replace a bootstrap whose content is not the server’s (docs/sdk.md, "How updates arrive")',
  () => {
    let h: SdkHarness;
    let tmp: { dir: string; remove: () => Promise<void> };
    let file: string;
    let served: Snapshot;

    beforeAll(async () => {
      h = await startSdkHarness();
      tmp = await tempDir('flagops-bootstrap-');
      const res = await fetch(`${h.service.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${h.key}` } });
      const current = (await res.json()) as Snapshot;
      // The current version, edited: new-checkout killed. Then a kill of another flag moves the server on.
      const edited = { ...current, flags: { ...current.flags, 'new-checkout': { ...current.flags['new-checkout'], killed: true } } };
      file = path.join(tmp.dir, 'bootstrap.json');
      await writeFile(file, JSON.stringify(edited));
      await h.kills.kill(killRequest(h, 'banner-text'));
      served = (await (
        await fetch(`${h.service.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${h.key}` } })
      ).json()) as Snapshot;
      expect(served.version).toBeGreaterThan(current.version);
    }, 120_000);
    afterAll(async () => {
      await h?.stop();
      await tmp?.remove();
    });

    it.skipIf(PYTHON_MISSING !== null)(
      'Python: ready at the server’s version, answering what POST /v1/evaluate answers',
      async () => {
        const keys = Object.keys(served.flags);
        const ran = await runTool('python3', ['-c', PYTHON_CLIENT, h.service.evalUrl, h.key, file, String(served.version), ...keys], {
          cwd: PYTHON_SDK,
          env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
        });
        expect(ran.code, ran.stderr).toBe(0);
        const out = JSON.parse(ran.stdout) as { status: string; version: number; results: unknown[] };
        expect(out).toMatchObject({ status: 'ready', version: served.version });
        const contexts = [undefined, { userId: 'user-1', attributes: { country: 'DE', appVersion: '2.4.0' } }];
        for (const [i, context] of contexts.entries()) {
          const res = await fetch(`${h.service.evalUrl}/v1/evaluate`, {
            method: 'POST',
            headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
            body: JSON.stringify(context === undefined ? { keys } : { keys, context }),
          });
          expect(out.results[i]).toEqual(await res.json());
        }
      },
      120_000,
    );

    it.skipIf(GO_MISSING !== null)(
      'Go: ready at the server’s version, answering what POST /v1/evaluate answers',
      async () => {
        const env = { ...GO_ENV, FLAGOPS_TEST_URL: h.service.evalUrl, FLAGOPS_TEST_SDK_KEY: h.key, FLAGOPS_TEST_BOOTSTRAP: file };
        const ran = await runTool('go', ['test', '-count=1', '-run', '^TestBootstrapAgainstService$', '-v', '.'], { cwd: GO_SDK, env });
        expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
        expect(ran.stdout).toMatch(/--- PASS: TestBootstrapAgainstService/);
      },
      600_000,
    );
  },
);
