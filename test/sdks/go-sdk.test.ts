import { describe, expect, it } from 'vitest';
import { GO_ENV, GO_MISSING, GO_SDK, runTool } from '../helpers/sdk-tools.js';

describe.skipIf(GO_MISSING !== null)('the Go SDK (sdks/go)', () => {
  it('passes go vet and go test ./... offline: every shared vector, the unit tests, the transport tests', async () => {
    const vet = await runTool('go', ['vet', './...'], { cwd: GO_SDK, env: GO_ENV });
    expect(vet.code, vet.stderr).toBe(0);
    const ran = await runTool('go', ['test', './...'], { cwd: GO_SDK, env: GO_ENV });
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    expect(ran.stdout).toMatch(/^ok\s/m);
  }, 600_000);
});
