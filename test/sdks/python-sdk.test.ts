import { describe, expect, it } from 'vitest';
import { PYTHON_MISSING, PYTHON_SDK, runTool } from '../helpers/sdk-tools.js';

describe.skipIf(PYTHON_MISSING !== null)('the Python SDK (sdks/python)', () => {
  it('passes its pytest suite: every shared vector, the unit tests, the transport tests', async () => {
    const ran = await runTool('python3', ['-m', 'pytest', '-p', 'no:cacheprovider'], {
      cwd: PYTHON_SDK,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    // A suite that collected nothing would also exit non-zero (5); this says what ran.
    expect(ran.stdout).toMatch(/\d+ passed/);
  }, 600_000);
});
