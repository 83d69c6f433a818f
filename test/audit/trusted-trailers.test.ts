import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditIndex } from '../../src/features/audit/index.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { FilePushReader } from '../../src/foundations/state/files/file-push-log.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import {
  admin,
  afterTest,
  apiCommit,
  Checkout,
  configYaml,
  openIndex,
  openRepository,
  SIGNING_KEY,
  seedShop,
  tempDir,
} from './fixtures.js';

const FORGED_TRAILERS =
  'Flagops-Action: config_update\nFlagops-Project: shop\nFlagops-Flag: a\nFlagops-Environment: dev\nFlagops-Actor-Type: admin\nFlagops-Actor: ops-admin\nFlagops-Key-Prefix: svc_adm_7hd82kqa';

async function reopen(
  repo: FlagRepository,
  options: { signingKey?: Buffer; unsignedTrailersUpTo?: string | null },
): Promise<FlagRepository> {
  const other = await FlagRepository.open({ gitdir: repo.gitdir, durable: false, ...options });
  afterTest(() => other.close());
  return other;
}

describe('Flagops-* trailers in the audit trail', () => {
  it('are believed on the commits the control plane signed', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    expect((await index.query({ limit: 3 })).entries.map((e) => [e.action, e.actor.type, e.actor.keyPrefix])).toEqual([
      ['flag_create', 'agent', 'svc_agt_3kq9x2ab'],
      ['flag_create', 'agent', 'svc_agt_3kq9x2ab'],
      ['project_create', 'admin', 'svc_adm_7hd82kqa'],
    ]);
  });

  it('are not believed on a commit placed on disk: it is described from its diff, as its git author', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    // Claims to be an admin's change in dev; it changes prod.
    const checkout = Checkout.of(repo).write(
      layout.configFile('shop', 'prod', 'a'),
      configYaml({ enabled: true, rolloutPct: 100, version: 2 }),
    );
    const forged = checkout.commit(`turn a on\n\n${FORGED_TRAILERS}`);
    await checkout.push(repo);
    expect((await index.query({ limit: 1 })).entries).toEqual([
      {
        id: forged,
        at: expect.any(String),
        action: 'config_update',
        projectSlug: 'shop',
        flagKey: 'a',
        environment: 'prod',
        actor: { type: 'git', name: 'Erin Engineer' },
        message: 'turn a on',
      },
    ]);
  });

  it('are not believed when a copied signature is put on another change', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const signed = await apiCommit(repo, [{ path: layout.configFile('shop', 'dev', 'a'), content: configYaml({ version: 2 }) }], {
      action: 'config_update',
      project: 'shop',
      flag: 'a',
      environment: 'dev',
      actor: admin,
    });
    const index = await openIndex(repo);
    const message = (await repo.readCommit(signed)).message;
    const checkout = Checkout.of(repo).write(layout.configFile('shop', 'prod', 'b'), configYaml({ enabled: true, version: 2 }));
    const copied = checkout.commit(message.trimEnd());
    await checkout.push(repo);
    expect((await index.query({ limit: 1 })).entries[0]).toMatchObject({
      id: copied,
      action: 'config_update',
      flagKey: 'b',
      environment: 'prod',
      actor: { type: 'git' },
    });
  });

  it('are not believed when signed with another installation’s key', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const stranger = await reopen(repo, { signingKey: Buffer.alloc(32, 9) });
    const commit = await apiCommit(stranger, [{ path: layout.configFile('shop', 'staging', 'b'), content: configYaml({ version: 2 }) }], {
      action: 'kill',
      project: 'shop',
      flag: 'a',
      environment: 'dev',
      actor: admin,
    });
    await repo.refresh();
    expect((await index.query({ limit: 1 })).entries[0]).toMatchObject({
      id: commit,
      action: 'config_update',
      flagKey: 'b',
      environment: 'staging',
      actor: { type: 'git' },
    });
  });

  it('are believed unsigned on commits up to the head recorded when signing began, and only there', async () => {
    const repo = await openRepository();
    const before = await reopen(repo, {}); // an older version: commits unsigned
    await seedShop(before);
    const upTo = await before.head();
    const upgraded = await reopen(repo, { signingKey: SIGNING_KEY, unsignedTrailersUpTo: upTo });
    const checkout = Checkout.of(upgraded).write(layout.configFile('shop', 'prod', 'a'), configYaml({ enabled: true, version: 2 }));
    const forged = checkout.commit(`turn a on\n\n${FORGED_TRAILERS}`);
    await checkout.push(upgraded);
    const index = await AuditIndex.open({ repo: upgraded });
    afterTest(() => index.close());
    expect((await index.query({ limit: 10 })).entries.map((e) => [e.action, e.actor.type, e.environment])).toEqual([
      ['config_update', 'git', 'prod'],
      ['flag_create', 'agent', null],
      ['flag_create', 'agent', null],
      ['project_create', 'admin', null],
    ]);
    expect((await index.query({ limit: 1 })).entries[0].id).toBe(forged);
  });
});

describe('the pusher of a commit', () => {
  it('is named beside the author the commit claims, read from the push log; other commits have none', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const pushLogFile = join(tempDir(), 'pushes', 'acme.jsonl');
    const index = await AuditIndex.open({ repo, pushes: new FilePushReader(pushLogFile) });
    afterTest(() => index.close());
    const checkout = Checkout.of(repo).write(layout.configFile('shop', 'prod', 'a'), configYaml({ enabled: true, version: 2 }));
    const pushed = checkout.commit('turn a on');
    const pushedBy = { type: 'agent', keyPrefix: 'svc_agt_pushpush', name: 'ci-bot' };
    mkdirSync(dirname(pushLogFile));
    writeFileSync(pushLogFile, `${JSON.stringify({ commit: pushed, pushedBy, at: '2026-01-02T09:00:00.000Z' })}\n{"commit":"cut sh`);
    await checkout.push(repo);
    const onDisk = checkout.write(layout.configFile('shop', 'prod', 'b'), configYaml({ enabled: true, version: 2 })).commit('turn b on');
    await checkout.push(repo);

    const { entries } = await index.query({ limit: 3 });
    expect(entries[0]).toMatchObject({ id: onDisk, actor: { type: 'git', name: 'Erin Engineer' } });
    expect(entries[0]).not.toHaveProperty('pushedBy');
    expect(entries[1]).toMatchObject({ id: pushed, actor: { type: 'git', name: 'Erin Engineer' }, pushedBy });
    expect(entries[2]).not.toHaveProperty('pushedBy');
  });

  it('survives a rebuild of the index from the log', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const pushLogFile = join(tempDir(), 'acme.jsonl');
    const checkout = Checkout.of(repo).write(layout.configFile('shop', 'dev', 'a'), configYaml({ enabled: true, version: 2 }));
    const pushed = checkout.commit('turn a on in dev');
    const pushedBy = { type: 'admin', keyPrefix: 'svc_adm_pushpush' };
    writeFileSync(pushLogFile, `${JSON.stringify({ commit: pushed, pushedBy, at: '2026-01-02T09:00:00.000Z' })}\n`);
    await checkout.push(repo);
    const index = await AuditIndex.open({ repo, pushes: new FilePushReader(pushLogFile) });
    afterTest(() => index.close());
    expect((await index.query({ limit: 1 })).entries[0]).toMatchObject({ id: pushed, pushedBy });
  });
});
