import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { type Service, startService } from '../../src/service.js';
import { gitAsync } from '../git-http/git-async.js';
import { git } from '../helpers/git-cli.js';
import { httpClient } from '../helpers/http-client.js';
import { remoteConfig } from './git-server.js';

const running: Service[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const service of running.splice(0)) await service.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// A remote git reaches by starting its own receive-pack (a path, file://) runs with the environment of the
// push to it; a push over /git pushes on to it from inside the receiving repository's pre-receive hook.
describe.each([
  ['a path', (gitdir: string) => gitdir],
  ['a file:// URL', (gitdir: string) => pathToFileURL(gitdir).href],
])('remote mode with %s as the remote', (_, urlOf) => {
  it('passes a push to /git/<org>.git on to the remote, which runs its own hooks outside the push here', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'flagops-local-remote-'));
    dirs.push(root);
    const remote = path.join(root, 'flags.git');
    execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', remote]);
    // The remote's own hook: what it is given of the push that reaches it.
    const seen = path.join(root, 'seen');
    writeFileSync(path.join(remote, 'hooks', 'pre-receive'), `#!/bin/sh\nenv | grep -E '^(GIT|FLAGOPS)_' | sort > '${seen}'\n`, {
      mode: 0o755,
    });
    const adminKey = generateKey('admin');
    const service = await startService(remoteConfig(path.join(root, 'data'), urlOf(remote), adminKey), silentLogger);
    running.push(service);
    const admin = httpClient(service.controlUrl, adminKey);
    const project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' });
    expect(git(remote, 'rev-parse', 'main')).toBe(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main'));

    const checkout = path.join(root, 'checkout');
    const url = `${service.controlUrl.replace('://', `://engineer:${adminKey}@`)}/git/acme.git`;
    expect((await gitAsync(root, 'clone', '--quiet', url, checkout)).ok).toBe(true);
    const file = path.join(checkout, 'projects/shop/flags/checkout.yaml');
    writeFileSync(file, `${readFileSync(file, 'utf8').replace(/^name: .*\n/m, '')}name: Pushed through flagops\n`);
    git(checkout, 'commit', '--quiet', '-am', 'rename checkout through flagops');
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.stderr).not.toContain('did not take the push');
    expect(pushed.ok).toBe(true);
    const head = git(checkout, 'rev-parse', 'HEAD');
    expect(git(remote, 'rev-parse', 'main')).toBe(head);
    expect(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main')).toBe(head);
    // The remote's receive-pack has its own quarantine, and nothing of the receiving side here: not its
    // repository, quarantine or protocol, nor the push check's context.
    const env = readFileSync(seen, 'utf8');
    expect(env).toMatch(new RegExp(`^GIT_QUARANTINE_PATH=${remote}/`, 'm'));
    expect(env).not.toMatch(/^(GIT_PROTOCOL|FLAGOPS_[A-Z_]+)=/m);
    expect(env).not.toContain(path.join(root, 'data'));
  });
});
