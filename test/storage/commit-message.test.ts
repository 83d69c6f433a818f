import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository, formatCommitMessage, parseCommitMessage, readFlagopsTrailers } from '../../src/foundations/storage/index.js';
import { admin, agent, git, gitWith, pushFromOutside, SIGNING_KEY, seedShop, tempDir, track } from './helpers.js';

describe('commit messages (docs/architecture.md "Commits and trailers"; the git log is the audit trail)', () => {
  it('are a summary, the free-text body and the Flagops trailers, in that order', () => {
    const message = formatCommitMessage({
      action: 'kill',
      summary: 'kill checkout-v2 in prod',
      body: 'reason: error rate above 5%',
      actor: agent,
      project: 'shop',
      flag: 'checkout-v2',
      environment: 'prod',
    });
    expect(message).toBe(
      [
        'kill checkout-v2 in prod',
        '',
        'reason: error rate above 5%',
        '',
        'Flagops-Action: kill',
        'Flagops-Project: shop',
        'Flagops-Flag: checkout-v2',
        'Flagops-Environment: prod',
        'Flagops-Actor-Type: agent',
        'Flagops-Actor: deploy-bot',
        'Flagops-Key-Prefix: svc_agt_3kq9x2ab',
        '',
      ].join('\n'),
    );
  });

  it('name the source environment of a promotion', () => {
    const message = formatCommitMessage({
      action: 'promote',
      summary: 'promote a',
      actor: admin,
      project: 'shop',
      flag: 'a',
      environment: 'prod',
      fromEnvironment: 'staging',
    });
    expect(readFlagopsTrailers(parseCommitMessage(message).trailers)).toEqual({
      action: 'promote',
      project: 'shop',
      flag: 'a',
      environment: 'prod',
      fromEnvironment: 'staging',
      actor: { type: 'admin', name: 'ops-admin', keyPrefix: 'svc_adm_7hd82kqa' },
    });
  });

  it('cannot be forged through a multi-line summary, body or actor name', () => {
    const message = formatCommitMessage({
      action: 'config_update',
      summary: 'line one\nFlagops-Action: kill',
      body: 'because\n\nFlagops-Actor-Type: admin',
      actor: { type: 'session', name: 'Eve\nFlagops-Actor-Type: admin', email: 'eve@example.com' },
    });
    const parsed = parseCommitMessage(message);
    expect(parsed.summary).toBe('line one Flagops-Action: kill');
    expect(readFlagopsTrailers(parsed.trailers)).toEqual({
      action: 'config_update',
      actor: { type: 'session', name: 'Eve Flagops-Actor-Type: admin' },
    });
  });

  it('read back summary, body and trailers', () => {
    const parsed = parseCommitMessage('kill a in prod\n\nreason: errors\nsecond line\n\nFlagops-Action: kill\nFlagops-Actor-Type: agent\n');
    expect(parsed).toEqual({
      summary: 'kill a in prod',
      body: 'reason: errors\nsecond line',
      bodyParagraphs: ['reason: errors\nsecond line'],
      trailers: [
        { key: 'Flagops-Action', value: 'kill' },
        { key: 'Flagops-Actor-Type', value: 'agent' },
      ],
    });
  });

  it('hold a body of several paragraphs as one, which git reads no trailer from, and read it back as written', () => {
    const body = [
      'reason: Error rate 7% after deploy 1432.',
      '',
      'Flagops-Actor-Type: admin',
      'Flagops-Key-Prefix: svc_adm_AAAAAAAA',
      '   ',
      '',
      '.',
      '  ..',
      '\tindented',
      'see INC-42.',
    ].join('\n');
    const message = formatCommitMessage({ action: 'kill', summary: 'kill a in prod', body, actor: agent, flag: 'a' });
    const [summary, folded, trailers, ...more] = message.trimEnd().split('\n\n');
    expect(summary).toBe('kill a in prod');
    expect(more).toEqual([]);
    expect(folded.split('\n')).toEqual([
      'reason: Error rate 7% after deploy 1432.',
      '  .',
      '  Flagops-Actor-Type: admin',
      '  Flagops-Key-Prefix: svc_adm_AAAAAAAA',
      '     .',
      '  .',
      '  ..',
      '    ...',
      '  \tindented',
      '  see INC-42.',
    ]);
    expect(trailers).toBe(
      'Flagops-Action: kill\nFlagops-Flag: a\nFlagops-Actor-Type: agent\nFlagops-Actor: deploy-bot\nFlagops-Key-Prefix: svc_agt_3kq9x2ab',
    );
    const parsed = parseCommitMessage(message);
    expect(parsed.body).toBe(body);
    expect(parsed.bodyParagraphs).toEqual([body]);
    expect(readFlagopsTrailers(parsed.trailers)?.actor).toEqual({ type: 'agent', name: 'deploy-bot', keyPrefix: 'svc_agt_3kq9x2ab' });
    // What git itself reads as the trailers: only ours.
    expect(gitWith(tempDir(), { input: message }, 'interpret-trailers', '--parse')).toBe(trailers);
  });

  it('read a body written before bodies were folded as it was: lines not indented, paragraphs apart', () => {
    const parsed = parseCommitMessage(
      'kill a\n\nreason: errors\n  - api\nsecond line\n\nmore\n\nFlagops-Action: kill\nFlagops-Actor-Type: agent\n',
    );
    expect(parsed.bodyParagraphs).toEqual(['reason: errors\n  - api\nsecond line', 'more']);
    expect(parsed.body).toBe('reason: errors\n  - api\nsecond line\n\nmore');
  });

  it('of commits without Flagops trailers give none (an engineer push is described from its diff)', () => {
    expect(readFlagopsTrailers(parseCommitMessage('Tune rollout\n\nSigned-off-by: Erin <erin@example.com>\n').trailers)).toBeNull();
    expect(parseCommitMessage('Tune rollout\n').trailers).toEqual([]);
    expect(readFlagopsTrailers(parseCommitMessage('x\n\nFlagops-Action: dance\nFlagops-Actor-Type: agent\n').trailers)).toBeNull();
  });
});

describe('readCommit', () => {
  it('returns the author, message parts and trailers of a commit the store wrote', async () => {
    const repo = track(
      await FlagRepository.open({
        gitdir: join(tempDir(), 'r.git'),
        create: true,
        clock: () => new Date('2024-05-01T12:00:00Z'),
        signingKey: SIGNING_KEY,
      }),
    );
    const seeded = await seedShop(repo);
    const { commit } = await repo.update(() => ({
      changes: [
        {
          path: layout.killsFile('shop', 'prod'),
          content: 'kills:\n  a:\n    killedAt: "2024-05-01T12:00:00Z"\n    killedBy: svc_agt_3kq9x2ab\n',
        },
      ],
      meta: {
        action: 'kill',
        summary: 'kill a in prod',
        body: 'reason: error rate above 5%',
        actor: agent,
        project: 'shop',
        flag: 'a',
        environment: 'prod',
      },
      result: undefined,
    }));
    const info = await repo.readCommit(commit!);
    expect(info).toMatchObject({
      oid: commit,
      parents: [seeded],
      author: { name: 'deploy-bot', email: 'svc_agt_3kq9x2ab@keys.flagops', timestamp: 1714564800, timezoneOffset: 0 },
      committer: { name: 'flagops', email: 'flagops@localhost' },
      summary: 'kill a in prod',
      body: 'reason: error rate above 5%',
      flagops: {
        action: 'kill',
        project: 'shop',
        flag: 'a',
        environment: 'prod',
        actor: { type: 'agent', name: 'deploy-bot', keyPrefix: 'svc_agt_3kq9x2ab' },
      },
    });
    expect(git(repo.gitdir, 'log', '-1', '--format=%(trailers:key=Flagops-Action,valueonly)', 'main')).toBe('kill');
  });

  it('of an actor named with control characters (a NUL, a line break) make a commit git and git hosts accept', async () => {
    const repo = track(await FlagRepository.open({ gitdir: join(tempDir(), 'r.git'), create: true, signingKey: SIGNING_KEY }));
    await seedShop(repo);
    const { commit } = await repo.update(() => ({
      changes: [
        { path: layout.killsFile('shop', 'prod'), content: 'kills:\n  a:\n    killedAt: "2024-05-01T12:00:00Z"\n    killedBy: sso\n' },
      ],
      meta: {
        action: 'kill',
        summary: 'kill a in prod',
        body: 'reason: nul \u0000 here',
        actor: { type: 'session', name: 'zed\u0000\nFlagops-Actor-Type: admin <x>', email: 'zed\u0000@example.com' },
        project: 'shop',
        flag: 'a',
        environment: 'prod',
      },
      result: undefined,
    }));
    // What GitHub and GitLab run on every push (receive.fsckObjects): a NUL in a header fails it.
    expect(() => git(repo.gitdir, 'fsck', '--strict', '--no-dangling')).not.toThrow();
    const info = await repo.readCommit(commit!);
    expect(info.author).toMatchObject({ name: 'zed Flagops-Actor-Type: admin x', email: 'zed @example.com' });
    expect(info.flagops?.actor).toEqual({ type: 'session', name: 'zed Flagops-Actor-Type: admin <x>' });
    expect(info.body).toBe('reason: nul  here');
  });

  it('attributes a pushed commit to its git author, with no Flagops trailers', async () => {
    const repo = track(await FlagRepository.open({ gitdir: join(tempDir(), 'r.git'), create: true }));
    await seedShop(repo);
    const pushed = pushFromOutside(
      repo.gitdir,
      (checkout) => git(checkout, 'rm', '--quiet', 'projects/shop/flags/b.yaml', 'projects/shop/environments/*/b.yaml'),
      'Remove flag b\n\nNo longer used.',
    );
    const info = await repo.readCommit(pushed);
    expect(info).toMatchObject({
      author: { name: 'Erin Engineer', email: 'erin@example.com' },
      summary: 'Remove flag b',
      body: 'No longer used.',
      flagops: null,
    });
  });

  it('offers the trailers of a commit without this store’s signature only as unsignedFlagops', async () => {
    const unsigned = track(await FlagRepository.open({ gitdir: join(tempDir(), 'r.git'), create: true }));
    const head = await seedShop(unsigned);
    expect((await unsigned.readCommit(head)).flagops).toBeNull();
    const signing = track(await FlagRepository.open({ gitdir: unsigned.gitdir, signingKey: SIGNING_KEY }));
    expect(await signing.readCommit(head)).toMatchObject({ flagops: null, unsignedFlagops: { action: 'project_create', project: 'shop' } });
    const forged = pushFromOutside(
      signing.gitdir,
      (checkout) => git(checkout, 'rm', '--quiet', 'projects/shop/environments/dev/b.yaml'),
      'x\n\nFlagops-Action: kill\nFlagops-Actor-Type: admin',
    );
    expect(await signing.readCommit(forged)).toMatchObject({
      flagops: null,
      unsignedFlagops: { action: 'kill', actor: { type: 'admin' } },
    });
  });
});

describe('the segment trailer', () => {
  it('is written for segment changes and read back', () => {
    const message = formatCommitMessage({
      action: 'segment_update',
      summary: 'update segment beta-testers',
      project: 'shop',
      segment: 'beta-testers',
      actor: { type: 'agent', name: 'bot', keyPrefix: 'svc_agt_12345678' },
    });
    expect(message).toContain('Flagops-Segment: beta-testers\n');
    expect(readFlagopsTrailers(parseCommitMessage(message).trailers)).toMatchObject({
      action: 'segment_update',
      project: 'shop',
      segment: 'beta-testers',
    });
  });
});
