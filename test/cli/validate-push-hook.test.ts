import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

  // As the service's own check: an invalid file a merge on the host put on main refuses only a push that brings issues.
  it('takes a push that leaves an invalid file already on main as it was, and refuses one that changes it or what it holds back', () => {
    const invalid = 'projects/shop/environments/prod/checkout-v2.yaml';
    git(checkout, 'reset', '--quiet', '--hard', 'origin/main');
    writeFileSync(join(checkout, invalid), 'enabled: maybe\n');
    git(checkout, 'commit', '--quiet', '-am', 'merged past the hook');
    expect(push(checkout, 'HEAD:refs/heads/typo').ok).toBe(true);
    git(join(work, 'host.git'), 'update-ref', 'refs/heads/main', git(checkout, 'rev-parse', 'HEAD'));

    // Another flag: served as pushed.
    const other = join(checkout, 'projects/shop/environments/dev/search-ranking.yaml');
    writeFileSync(other, readFileSync(other, 'utf8').replace(/^rolloutPct: .*$/m, 'rolloutPct: 50'));
    git(checkout, 'commit', '--quiet', '-am', 'half in dev');
    const taken = push(checkout, 'HEAD:main');
    expect(taken.ok, taken.stderr).toBe(true);

    // The held-back flag's other config: it would be committed and not served.
    const sameFlag = join(checkout, 'projects/shop/environments/dev/checkout-v2.yaml');
    writeFileSync(sameFlag, readFileSync(sameFlag, 'utf8').replace(/^rolloutPct: .*$/m, 'rolloutPct: 50'));
    git(checkout, 'commit', '--quiet', '-am', 'half of the held-back flag in dev');
    const held = push(checkout, 'HEAD:main');
    expect(held.ok).toBe(false);
    expect(held.stderr).toContain(`flag "checkout-v2" is held back by an invalid file on main (${invalid}`);
    git(checkout, 'reset', '--quiet', '--hard', 'HEAD~1');

    writeFileSync(join(checkout, invalid), 'enabled: maybe\nrolloutPct: 5\n');
    git(checkout, 'commit', '--quiet', '-am', 'still a typo');
    const refused = push(checkout, 'HEAD:main');
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain(`${invalid}:1:10: /enabled: must be a boolean`);
  });

  it('still refuses to delete main', () => {
    const deleted = push(checkout, ':main');
    expect(deleted.ok).toBe(false);
    expect(deleted.stderr).toContain('main cannot be deleted');
  });
});
