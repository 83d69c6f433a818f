import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleMain } from '../service/service-process.js';
import { ROOT } from './cli-harness.js';

// The in-process tests cover behaviour; this checks the CLI starts as a real process: its exit codes and
// streams. It runs the CLI bundled from the sources here, as the service's process tests do, so it neither
// needs `npm run build` first nor runs a dist/ older than the sources.
describe('the flagops CLI as its own process', () => {
  let bin: Awaited<ReturnType<typeof bundleMain>>;

  beforeAll(async () => {
    bin = await bundleMain({ source: 'src/apps/cli/main.ts' });
  });
  afterAll(() => bin?.remove());

  it('validates the sample repository with exit 0', () => {
    const result = spawnSync(process.execPath, [bin.entry, 'validate', 'flags'], { cwd: ROOT, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^flags: valid \(/);
    expect(result.status).toBe(0);
  });

  it('exits 2 on an unknown command', () => {
    const result = spawnSync(process.execPath, [bin.entry, 'deploy'], { cwd: ROOT, encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('unknown command "deploy"');
  });
});
