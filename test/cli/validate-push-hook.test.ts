import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../helpers/git-cli.js';
import { ROOT, SAMPLE } from './cli-harness.js';

/** `git push` in `checkout`, its exit status and what the host said. */
function push(checkout: string, ...refspecs: string[]): { ok: boolean; stderr: string } {
  const pushed = spawnSync('git', ['push', 'origin', ...refspecs], { cwd: checkout, encoding: 'utf8' });
  return { ok: pushed.status === 0, stderr: pushed.stderr };
}

// docs/deployment.md: `flagops validate-push` as the pre-receive hook of a self-hosted git server (Gitea,
// GitLab). There main is what the service serves; other branches are engineers' pull requests, and the
// service's own proposal branches in remote mode.
describe('flagops validate-push as the pre-receive hook of a git host', () => {
  let work: string;
  let checkout: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'flagops-validate-push-'));
    const host = join(work, 'host.git');
    git(work, 'init', '--quiet', '--bare', '--initial-branch=main', host);
    const hook = join(host, 'hooks', 'pre-receive');
    writeFileSync(hook, `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'dist/apps/cli/main.js')}" validate-push\n`);
    chmodSync(hook, 0o755);
    checkout = join(work, 'checkout');
    git(work, 'clone', '--quiet', host, checkout);
    git(checkout, 'config', 'user.name', 'Erin Engineer');
    git(checkout, 'config', 'user.email', 'erin@example.com');
    cpSync(SAMPLE, checkout, { recursive: true });
    git(checkout, 'add', '-A');
    git(checkout, 'commit', '--quiet', '-m', 'the flags');
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('takes a valid main, and refuses an invalid one naming the file', () => {
    expect(push(checkout, 'HEAD:main').ok).toBe(true);
    writeFileSync(join(checkout, 'projects/shop/environments/prod/checkout-v2.yaml'), 'enabled: maybe\n');
    git(checkout, 'commit', '--quiet', '-am', 'a typo');
    const refused = push(checkout, 'HEAD:main');
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain('projects/shop/environments/prod/checkout-v2.yaml');
  });

  it('takes other branches as they are: pull requests, and the service’s proposal branches in remote mode', () => {
    const branch = push(checkout, 'HEAD:refs/heads/feature/typo', 'HEAD:refs/heads/proposals/uv7l58uwz7jh');
    expect(branch.ok, branch.stderr).toBe(true);
    expect(push(checkout, ':refs/heads/proposals/uv7l58uwz7jh').ok).toBe(true);
  });

  it('still refuses to delete main', () => {
    const deleted = push(checkout, ':main');
    expect(deleted.ok).toBe(false);
    expect(deleted.stderr).toContain('main cannot be deleted');
  });
});
