import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SnapshotHolder } from '../../src/apps/eval-server/snapshot-holder.js';
import { KillSwitch } from '../../src/features/kill/kill-switch.js';
import { StorageFaultError } from '../../src/foundations/errors/kinds.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import type { FlagRepository } from '../../src/foundations/storage/flag-repository.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { cloneRepo } from './git-cli.js';
import { actor, commitFiles, type EvalHarness, evaluate, projectFiles, sdkKey, startHarness, within } from './harness.js';

describe('the kill fast path', () => {
  let h: EvalHarness;
  let key: string;
  let kills: KillSwitch;
  const resultOf = async (flag: string) =>
    (
      (await (await evaluate(h, key, { key: flag, context: { userId: 'u1', attributes: { plan: 'beta' } } })).json()) as Record<
        string,
        { value: unknown; reason: string }
      >
    )[flag];
  const version = async () =>
    (await (await fetch(`${h.service.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${key}` } })).json()).version;
  const request = (flagKey: string, reason?: string) => ({
    org: 'acme',
    repo: h.repo,
    projectSlug: 'shop',
    flagKey,
    environment: 'prod' as const,
    actor,
    reason,
  });

  beforeAll(async () => {
    h = await startHarness();
    const rules = [{ id: 'beta', conditions: [{ attribute: 'plan', op: 'eq' as const, value: 'beta' }], serve: 'on' as const }];
    await commitFiles(h.repo, projectFiles('shop', [{ key: 'checkout', rules }, { key: 'search', rules }, { key: 'pushed' }]));
    await h.service.holder.served('acme');
    key = await sdkKey(h, 'shop', 'prod');
    kills = new KillSwitch(h.service.holder);
  });
  afterAll(() => h?.stop());

  it('serves valueOff with reason killed as soon as the kill call returns, overriding a matching rule', async () => {
    expect(await resultOf('checkout')).toMatchObject({ value: true, reason: 'rule_match' });
    const outcome = await kills.kill(request('checkout', 'error rate'));
    expect(outcome.changed).toBe(true);
    expect(await resultOf('checkout')).toEqual({ value: false, reason: 'killed', variation: 'off' });
  });

  it('changes the snapshot version on kill and on clear', async () => {
    const before = await version();
    await kills.kill(request('search'));
    const killed = await version();
    expect(killed).toBeGreaterThan(before);
    await kills.clear(request('search'));
    expect(await version()).toBeGreaterThan(killed);
    expect(await resultOf('search')).toMatchObject({ value: true, reason: 'rule_match' });
  });

  it('swaps only the overlay: the compiled flags are shared with the view before the kill', async () => {
    const before = h.service.holder.view('acme', 'prj_shop', 'prod')!;
    await kills.kill(request('search'));
    const after = h.service.holder.view('acme', 'prj_shop', 'prod')!;
    expect(after).not.toBe(before);
    expect(after.compiled).toBe(before.compiled);
    expect(after.killed.has('search')).toBe(true);
  });

  it('treats killing a killed flag as harmless: nothing changes, no commit', async () => {
    const head = await h.repo.head();
    const outcome = await kills.kill(request('checkout'));
    expect(outcome.changed).toBe(false);
    expect(await h.repo.head()).toBe(head);
    expect((await resultOf('checkout')).reason).toBe('killed');
  });

  it('writes the kill into kills.yaml with who and why, in one commit with trailers', async () => {
    const { state } = await h.repo.readState();
    expect(state.projects.get('shop')!.kills.prod.kills.checkout).toMatchObject({ killedBy: actor.keyPrefix, reason: 'error rate' });
    const log = await h.repo.firstParentLog({ from: await h.repo.head(), limit: 10 });
    const commit = log.find((c) => c.flagops?.action === 'kill' && c.flagops.flag === 'checkout')!;
    expect(commit.flagops).toMatchObject({ environment: 'prod', project: 'shop', actor: { keyPrefix: actor.keyPrefix } });
    expect(commit.body).toContain('error rate');
  });

  it('applies a kill pushed from outside as soon as the ref moves', async () => {
    const checkout = await cloneRepo(h.repo.gitdir);
    try {
      const file = 'projects/shop/environments/prod/kills.yaml';
      const current = await checkout.read(file);
      const entry = '  pushed:\n    killedAt: 2026-11-21T10:00:00.000Z\n    killedBy: erin\n';
      await checkout.write(file, current.includes('kills: {}') ? `kills:\n${entry}` : `${current.trimEnd()}\n${entry}`);
      await checkout.commitAndPush('kill pushed');
      await within(
        PROMPTLY_MS,
        () => resultOf('pushed'),
        (r) => r.reason === 'killed',
      );
    } finally {
      await checkout.remove();
    }
  });
});

describe('a kill made in this process', () => {
  it('is served by its overlay before its commit is announced: the announcement reloads nothing', async () => {
    const h = await startHarness();
    try {
      await commitFiles(h.repo, projectFiles('shop', [{ key: 'checkout' }]));
      // A second server on the same repository, whose reads of served state are counted.
      let reads = 0;
      const counted = Object.assign(Object.create(h.repo) as FlagRepository, {
        readServed: (commit: string) => {
          reads++;
          return h.repo.readServed(commit);
        },
      });
      const holder = new SnapshotHolder(silentLogger);
      await holder.add('acme', counted);
      const kills = new KillSwitch(holder);
      reads = 0;
      await kills.kill({ org: 'acme', repo: h.repo, projectSlug: 'shop', flagKey: 'checkout', environment: 'prod', actor });
      expect(holder.view('acme', 'prj_shop', 'prod')!.killed.has('checkout')).toBe(true);
      await holder.served('acme');
      expect(holder.servedHeadAndHeight('acme')?.commit).toBe(await h.repo.head());
      expect(reads).toBe(0);
      // Any other commit is served by a reload, which reads it.
      await commitFiles(h.repo, projectFiles('shop', [{ key: 'checkout', rolloutPct: 50 }]).slice(1));
      await holder.served('acme');
      expect(reads).toBeGreaterThan(0);
      holder.close();
    } finally {
      await h.stop();
    }
  });
});

describe('a kill whose commit the evaluation server cannot serve', () => {
  it('is not acknowledged: the kill call rejects with the storage fault, never resolves unserved', async () => {
    const h = await startHarness();
    try {
      await commitFiles(h.repo, projectFiles('shop', [{ key: 'checkout' }]));
      const good = await h.repo.head();
      // A second server on the same repository, to which every commit after `good` reads as a damaged object does
      // (the writes it then refuses are its own: the kill below is committed through h.repo).
      const fault = new StorageFaultError('read', 'git object 0123456789ab cannot be read (unknown compression method)');
      const damaged = Object.assign(Object.create(h.repo) as FlagRepository, {
        readServed: (commit: string) => (commit === good ? h.repo.readServed(commit) : Promise.reject(fault)),
      });
      const holder = new SnapshotHolder(silentLogger);
      await holder.add('acme', damaged);
      // Main moves on to a commit it cannot serve; the kill then goes on top of that.
      await commitFiles(h.repo, projectFiles('shop', [{ key: 'checkout', rolloutPct: 50 }]).slice(1));
      const kills = new KillSwitch(holder);
      await expect(
        kills.kill({ org: 'acme', repo: h.repo, projectSlug: 'shop', flagKey: 'checkout', environment: 'prod', actor }),
      ).rejects.toBe(fault);
      expect(holder.view('acme', 'prj_shop', 'prod')!.killed.has('checkout')).toBe(false);
      expect(holder.servedHeadAndHeight('acme')?.commit).toBe(good);
      holder.close();
    } finally {
      await h.stop();
    }
  });
});
