import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, pushFromOutside, tempDir, waitFor } from '../storage/helpers.js';
import { repositoryFollowingRemote } from './following-remote.js';

describe('a pull whose fetch is under way while a change of this control plane reaches the git remote', () => {
  it('does not take the change for one the host dropped (a force-push): main and the remote agree, nothing is refused', async () => {
    const { gitdir, parent, remote, sync, commit: commitHere } = await repositoryFollowingRemote();
    expect(await sync.pull()).toBe('unchanged');
    // A change committed here, on its way to the remote (FlagRepository publishes it before main moves).
    const commit = await commitHere(2);

    // The host lists its refs at once (main at `parent`) and answers a second later: the fetch sees main as it
    // was when it began, before the change landed.
    const listed = join(tempDir(), 'listed');
    const slowUploadPack = join(tempDir(), 'slow-upload-pack');
    writeFileSync(slowUploadPack, `#!/bin/sh\ngit upload-pack "$@" | (touch '${listed}'; sleep 1; cat)\n`, { mode: 0o755 });
    git(gitdir, 'config', 'remote.flagops-remote.uploadpack', slowUploadPack);
    // Protocol version 0: the host lists its refs as it starts (version 2 waits for the client to ask).
    git(gitdir, 'config', 'protocol.version', '0');
    const pulling = sync.pull();
    await waitFor(() => (existsSync(listed) ? true : undefined));
    expect(await sync.publish(commit, parent)).toBe(true);
    expect(git(remote, 'rev-parse', 'main')).toBe(commit);

    expect(await pulling).not.toBe('diverged');
    expect(sync.health()).toMatchObject({ diverged: false, reachable: true });
    expect(git(gitdir, 'rev-parse', 'main')).toBe(commit);
    expect(git(remote, 'rev-parse', 'main')).toBe(commit);
    sync.close();
  });

  it("takes the remote's main when another process's fetch holds the tracking ref a moment (flagops import beside the service)", async () => {
    const { gitdir, parent, remote, sync } = await repositoryFollowingRemote();
    expect(await sync.pull()).toBe('unchanged');
    const moved = pushFromOutside(remote, (checkout) => writeFileSync(join(checkout, 'README.md'), 'merged on the host\n'), 'merged');

    // The other process's fetch: git's lock on the tracking ref, held for a moment.
    const lock = join(gitdir, 'refs', 'flagops', 'remote-main.lock');
    writeFileSync(lock, `${parent}\n`);
    setTimeout(() => rmSync(lock, { force: true }), 400);
    expect(await sync.pull()).toBe('fast-forwarded');
    expect(git(gitdir, 'rev-parse', 'main')).toBe(moved);
    expect(sync.health()).toMatchObject({ reachable: true });
    sync.close();
  });
});
