import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './cli-harness.js';

const BIN = join(ROOT, 'dist/cli/main.js');

// The in-process tests cover behaviour; this checks the built bin starts as a real process (after `npm run build`).
describe.runIf(existsSync(BIN))('the built flagops bin', () => {
  it('validates the sample repository with exit 0', () => {
    const result = spawnSync(process.execPath, [BIN, 'validate', 'flags'], { cwd: ROOT, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^flags: valid \(/);
    expect(result.status).toBe(0);
  });

  it('exits 2 on an unknown command', () => {
    const result = spawnSync(process.execPath, [BIN, 'deploy'], { cwd: ROOT, encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('unknown command "deploy"');
  });
});
