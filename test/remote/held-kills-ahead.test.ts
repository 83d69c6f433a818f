import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HeldKillsAheadError } from '../../src/foundations/errors/kinds.js';
import { git, pushFromOutside } from '../storage/helpers.js';
import { repositoryFollowingRemote } from './following-remote.js';

describe('a change pushed while main holds a kill the git remote has not taken, the remote having moved on meanwhile', () => {
  it('is refused as one to try again in a moment, not as a divergence an operator must reconcile', async () => {
    const { parent, remote, sync, commit } = await repositoryFollowingRemote();

    // The host is out of reach when the kill comes: it is held here (committed, served) and retried.
    const kill = await commit(2);
    renameSync(remote, `${remote}.away`);
    expect(await sync.publish(kill, parent, 'kill')).toBe(true);
    expect(sync.holdsKills).toBe(true);
    sync.close(); // no retries: the host stays without the kill for this test
    renameSync(`${remote}.away`, remote);
    // Back, it takes another change first (a merge on the host, another control plane).
    const moved = pushFromOutside(
      remote,
      (checkout) => writeFileSync(join(checkout, 'README.md'), 'merged on the host\n'),
      'a change on the host',
    );

    const change = await commit(3);
    const refused = await sync.publish(change, kill).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(HeldKillsAheadError);
    expect((refused as Error).message).toContain('holds kills the git remote');
    expect(sync.health()).toMatchObject({ diverged: false, holdingKills: true });
    expect(git(remote, 'rev-parse', 'main')).toBe(moved);
  });
});
