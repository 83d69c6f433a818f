import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleMain } from '../service/service-process.js';
import { ROOT, SAMPLE } from './cli-harness.js';

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

  it('stops quietly, with exit 0, when whoever reads its output stops reading (| head)', async () => {
    // A repository whose accessors are well over a pipe's 64 KiB, so the reader is gone before the writing ends.
    const dir = mkdtempSync(path.join(tmpdir(), 'flagops-cli-pipe-'));
    try {
      cpSync(SAMPLE, dir, { recursive: true });
      const project = path.join(dir, 'projects', 'shop');
      for (let i = 0; i < 2000; i++) {
        const key = `generated-flag-${i}`;
        writeFileSync(
          path.join(project, 'flags', `${key}.yaml`),
          `key: ${key}\nname: Generated ${i}\nkind: boolean\ndefaultValue: false\narchivedAt: null\n`,
        );
        for (const env of ['dev', 'staging', 'prod'])
          writeFileSync(
            path.join(project, 'environments', env, `${key}.yaml`),
            'enabled: false\nrolloutPct: 0\nvalueOn: true\nvalueOff: false\nversion: 1\nrules: []\n',
          );
      }
      const child = spawn(process.execPath, [bin.entry, 'generate', '--lang', 'ts', '--project', 'shop', '--dir', dir], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      await new Promise((resolve) => child.stdout.once('data', resolve));
      child.stdout.destroy();
      const code = await new Promise((resolve) => child.once('close', resolve));
      expect(stderr).toBe('');
      expect(code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits 2 on an unknown command', () => {
    const result = spawnSync(process.execPath, [bin.entry, 'deploy'], { cwd: ROOT, encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('unknown command "deploy"');
  });
});
