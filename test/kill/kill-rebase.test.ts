import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rebaseHeldKills } from '../../src/features/kill/kill-rebase.js';
import { KillSwitch } from '../../src/features/kill/kill-switch.js';
import { compareAndSwapRef, MAIN_REF } from '../../src/foundations/storage/git/refs.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { admin, SIGNING_KEY, seedShop, tempDir, track } from '../storage/helpers.js';

/**
 * Remote mode rebuilds main on the git remote's head when main holds kills the remote lacks. Here one repository
 * plays both sides: the remote's head is a commit main does not descend from, and main is moved by hand.
 */
async function shop() {
  const repo = track(await FlagRepository.open({ gitdir: join(tempDir(), 'org.git'), create: true, signingKey: SIGNING_KEY }));
  const base = await seedShop(repo);
  const killSwitch = new KillSwitch({ applyKills: async () => {} });
  const request = { org: 'acme', repo, projectSlug: 'shop', flagKey: 'a', environment: 'prod' as const, actor: admin };
  const moveMain = async (from: string, to: string) => expect((await compareAndSwapRef(repo.gitdir, MAIN_REF, from, to)).ok).toBe(true);
  const killedAt = async (commit: string) => Object.keys((await repo.readServed(commit)).killFiles.get('shop')!.prod.kills);
  const actions = async () => (await repo.firstParentLog({ from: await repo.head(), until: base })).map((c) => c.flagops?.action).reverse();
  return { repo, base, killSwitch, request, moveMain, killedAt, actions };
}

describe('kills held here, made again on the git remote’s head', () => {
  it('a kill or clear committed after main was read for the rebuild is rebuilt too, never dropped', async () => {
    const { repo, base, killSwitch, request, moveMain, killedAt, actions } = await shop();
    // The remote got another change meanwhile.
    const { commit: remote } = await killSwitch.kill({ ...request, flagKey: 'b' });
    await moveMain(remote!, base);
    const { commit: kill } = await killSwitch.kill(request);
    // The clear lands after the held commits were listed ([kill]) and before the rebuild runs.
    const { commit: clear } = await killSwitch.clear(request);
    expect(clear).not.toBeNull();

    expect(await rebaseHeldKills(repo, [kill!], async () => remote)).toBe(true);

    expect(await actions()).toEqual(['kill', 'kill', 'clear_kill']);
    expect(await killedAt((await repo.head())!)).toEqual(['b']);
  });

  it('a kill the remote has already, made again there from its record and cleared after, is not made again on top', async () => {
    const { repo, base, killSwitch, request, moveMain, killedAt, actions } = await shop();
    const { commit: kill, entry } = await killSwitch.kill(request);
    // Another control plane made the same kill from its record (the commit names the one it was made from) and
    // then cleared it; both are on the remote.
    await moveMain(kill!, base);
    const { commit: copy } = await killSwitch.kill({ ...request, entry, madeFrom: kill! });
    expect((await repo.readCommit(copy!)).flagops?.madeFrom).toBe(kill);
    const { commit: remote } = await killSwitch.clear(request);
    await moveMain(remote!, kill!);

    expect(await rebaseHeldKills(repo, [kill!], async () => remote)).toBe(true);

    expect(await repo.head()).toBe(remote);
    expect(await killedAt(remote!)).toEqual([]);
    expect(await actions()).toEqual(['kill', 'clear_kill']);
  });

  it('a kill held here before a clear the remote has already is made again on top, and the clear after it, so the clear stays last', async () => {
    const { repo, base, killSwitch, request, moveMain, killedAt, actions } = await shop();
    // The remote: another control plane's own kill and clear, made before it listed this one's kill (no copy).
    const { commit: theirKill, entry } = await killSwitch.kill({ ...request, reason: 'theirs' });
    const { commit: theirClear } = await killSwitch.clear(request);
    await moveMain(theirClear!, base);
    // Here: this control plane's own kill, then theirs made from their records, after it: their kill changes
    // nothing (killed already), their clear clears.
    const { commit: ours } = await killSwitch.kill({ ...request, reason: 'ours' });
    expect((await killSwitch.kill({ ...request, entry, madeFrom: theirKill! })).commit).toBe(ours);
    const { commit: copiedClear } = await killSwitch.clear({ ...request, madeFrom: theirClear! });

    expect(await rebaseHeldKills(repo, [ours!, copiedClear!], async () => theirClear)).toBe(true);

    // The kill held here reaches the audit trail; the clear, which came after it here, is made again after it.
    const head = (await repo.head())!;
    expect(await killedAt(head)).toEqual([]);
    expect(await actions()).toEqual(['kill', 'clear_kill', 'kill', 'clear_kill']);
    const [kill, clear] = (await repo.firstParentLog({ from: head, until: theirClear })).reverse();
    expect(kill.flagops).toMatchObject({ action: 'kill', madeFrom: ours });
    expect(clear.flagops).toMatchObject({ action: 'clear_kill', madeFrom: theirClear });
  });

  it('a kill made again on the remote’s head names the commit that first made it, so it is not made a third time', async () => {
    const { repo, base, killSwitch, request, moveMain, actions } = await shop();
    const { commit: remote } = await killSwitch.kill({ ...request, flagKey: 'b' });
    await moveMain(remote!, base);
    const { commit: kill } = await killSwitch.kill(request);

    expect(await rebaseHeldKills(repo, [kill!], async () => remote)).toBe(true);

    const rebuilt = (await repo.head())!;
    expect(rebuilt).not.toBe(kill);
    expect((await repo.readCommit(rebuilt)).flagops).toMatchObject({ action: 'kill', flag: 'a', madeFrom: kill });
    expect(await actions()).toEqual(['kill', 'kill']);
  });

  it('a kill made again keeps its reason of several paragraphs as first written, not folded twice', async () => {
    const { repo, base, killSwitch, request, moveMain } = await shop();
    const { commit: remote } = await killSwitch.kill({ ...request, flagKey: 'b' });
    await moveMain(remote!, base);
    const reason = 'errors\n\n  a step\n.\nsee INC-42';
    const { commit: kill } = await killSwitch.kill({ ...request, reason });

    expect(await rebaseHeldKills(repo, [kill!], async () => remote)).toBe(true);

    const [first, again] = await Promise.all([repo.readCommit(kill!), repo.readCommit((await repo.head())!)]);
    expect(again.body).toBe(`reason: ${reason}`);
    expect(again.message.split('\n\n')[1]).toBe(first.message.split('\n\n')[1]);
  });
});
