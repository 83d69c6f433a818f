import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { startService } from '../../src/service.js';
import { flagops, ROOT } from '../cli/cli-harness.js';
import { git } from '../helpers/git-cli.js';
import { remoteConfig, startGitServer } from './git-server.js';

/**
 * The git remote takes an import's commit, and main in the data directory moves before the import can move it
 * (a running service committing a kill the remote has not taken yet): the import is made, on the remote.
 */
describe('flagops import in remote mode, main moving under it once the remote took its commit', () => {
  let host: Awaited<ReturnType<typeof startGitServer>>;
  let work: string;

  beforeAll(async () => {
    host = await startGitServer();
    work = await mkdtemp(path.join(os.tmpdir(), 'flagops-import-moving-'));
  });
  afterAll(async () => {
    await host.stop();
    await rm(work, { recursive: true, force: true });
  });

  it('says it imported the commit the remote holds, exit 0, rather than "diverged; nothing was imported"', async () => {
    // A data directory a service followed the remote with (stopped now: nothing else moves main here).
    const dataDir = path.join(work, 'data');
    const service = await startService(remoteConfig(dataDir, host.url, generateKey('admin')), silentLogger);
    await service.stop();
    const env = { FLAGOPS_GIT_REMOTE: host.url };
    const first = await flagops(['import', 'flags', '--org', 'acme', '--data-dir', dataDir, '--yes'], ROOT, env);
    expect(first.code, first.stderr).toBe(0);
    const gitdir = path.join(dataDir, 'repos', 'acme.git');

    // Once, when the remote takes the next push: a commit on main here that the remote lacks.
    const marker = path.join(work, 'moved');
    writeFileSync(
      path.join(host.gitdir, 'hooks', 'post-receive'),
      `#!/bin/sh\n[ -e '${marker}' ] && exit 0\ntouch '${marker}'\nunset GIT_DIR GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES\nexport GIT_AUTHOR_NAME=ops GIT_AUTHOR_EMAIL=ops@example.com GIT_COMMITTER_NAME=ops GIT_COMMITTER_EMAIL=ops@example.com\n` +
        `cd '${gitdir}' && c=$(git commit-tree "$(git rev-parse 'main^{tree}')" -p main -m 'held here, not on the remote') && git update-ref refs/heads/main "$c"\n`,
      { mode: 0o755 },
    );
    const edited = path.join(work, 'flags');
    cpSync(path.join(ROOT, 'flags'), edited, { recursive: true });
    const project = path.join(edited, 'projects', 'shop', 'project.yaml');
    writeFileSync(project, readFileSync(project, 'utf8').replace(/^name: .*$/m, 'name: Shop (imported again)'));

    const second = await flagops(['import', edited, '--org', 'acme', '--data-dir', dataDir, '--replace', '--yes'], ROOT, env);
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    const landed = git(host.gitdir, 'rev-parse', 'main');
    expect(second.stdout).toContain(`into acme: commit ${landed}`);
    expect(git(host.gitdir, 'show', 'main:projects/shop/project.yaml')).toContain('Shop (imported again)');
  });
});
