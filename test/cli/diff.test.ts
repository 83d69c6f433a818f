import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flagops, sampleCopy } from './cli-harness.js';

/** git, isolated from the machine's configuration, with a fixed author and dates. */
function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Alice', '-c', 'user.email=alice@example.com', '-c', 'commit.gpgsign=false', ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_DATE: '2025-03-01T10:00:00Z',
      GIT_COMMITTER_DATE: '2025-03-01T10:00:00Z',
    },
  }).trim();
}

function edit(dir: string, path: string, change: (text: string) => string): void {
  const full = join(dir, path);
  writeFileSync(full, change(readFileSync(full, 'utf8')));
}

describe('flagops diff', () => {
  let repo: { dir: string; remove: () => void };
  let first: string;

  beforeAll(() => {
    // A checkout of the sample with two more commits: a rollout and a kill, then an uncommitted edit.
    repo = sampleCopy();
    git(repo.dir, 'init', '-q', '-b', 'main');
    git(repo.dir, 'add', '.');
    git(repo.dir, 'commit', '-q', '-m', 'sample');
    first = git(repo.dir, 'rev-parse', 'HEAD');
    edit(repo.dir, 'projects/shop/environments/prod/checkout-v2.yaml', (t) => t.replace('rolloutPct: 10', 'rolloutPct: 50'));
    git(repo.dir, 'commit', '-q', '-am', 'roll out checkout');
    edit(
      repo.dir,
      'projects/shop/environments/prod/kills.yaml',
      () => 'kills:\n  checkout-v2:\n    killedAt: 2025-03-02T14:05:00Z\n    killedBy: alice\n',
    );
    git(repo.dir, 'commit', '-q', '-am', 'kill checkout');
    edit(repo.dir, 'projects/shop/environments/dev/checkout-v2.yaml', (t) => t.replace('enabled: true', 'enabled: false'));
  });

  afterAll(() => repo.remove());

  it('prints the changes between two commits in words, exit 0', async () => {
    expect(await flagops(['diff', first, 'HEAD', '--repo', repo.dir])).toEqual({
      code: 0,
      stdout: 'shop/checkout-v2 prod: killed by alice; rolloutPct 10 → 50\n',
      stderr: '',
    });
  });

  it('--impact adds the share of users each changed config moves; a kill alone moves nobody', async () => {
    expect(await flagops(['diff', first, 'HEAD', '--impact', '--repo', repo.dir])).toEqual({
      code: 0,
      stdout: 'shop/checkout-v2 prod: killed by alice; rolloutPct 10 → 50\nshop/checkout-v2 prod: moves 40.00 % of users from off to on\n',
      stderr: '',
    });
    expect((await flagops(['diff', 'HEAD~1', '--impact', '--repo', repo.dir])).stdout).toBe(
      'shop/checkout-v2 prod: killed by alice\nimpact: no environment config changed\n',
    );
    expect((await flagops(['diff', '--help'])).stdout).toContain('--impact');
  });

  it('compares with HEAD by default and reads revisions the way git does', async () => {
    expect((await flagops(['diff', 'HEAD~1', '--repo', repo.dir])).stdout).toBe('shop/checkout-v2 prod: killed by alice\n');
    expect((await flagops(['diff', 'main~2', 'main~1'], repo.dir)).stdout).toBe('shop/checkout-v2 prod: rolloutPct 10 → 50\n');
  });

  it('shows a guarded schedule with its query, bounds and interval, so a reviewer reads what stops the rollout', async () => {
    const guarded = sampleCopy();
    try {
      git(guarded.dir, 'init', '-q', '-b', 'main');
      git(guarded.dir, 'add', '.');
      git(guarded.dir, 'commit', '-q', '-m', 'sample');
      edit(guarded.dir, 'projects/shop/environments/prod/checkout-v2.yaml', (t) =>
        [
          t,
          'schedule:',
          '  - at: 2099-11-24T09:00:00Z',
          '    set: { rolloutPct: 50 }',
          '    guard: { query: "sum(rate(checkout_errors_total[5m]))", max: 0.05, intervalSeconds: 30 }',
          '',
        ].join('\n'),
      );
      git(guarded.dir, 'commit', '-q', '-am', 'guarded rollout');
      expect((await flagops(['diff', 'HEAD~1', 'HEAD', '--repo', guarded.dir])).stdout).toBe(
        'shop/checkout-v2 prod: schedule: 1 step added; next 2099-11-24 09:00Z → rollout 50 %; guard sum(rate(checkout_errors_total[5m])) ≤ 0.05 every 30 s\n',
      );
    } finally {
      guarded.remove();
    }
  });

  it('keeps a kill reason with line breaks on its change’s line, escaped, so it cannot show a change that is not there', async () => {
    const killed = sampleCopy();
    try {
      git(killed.dir, 'init', '-q', '-b', 'main');
      git(killed.dir, 'add', '.');
      git(killed.dir, 'commit', '-q', '-m', 'sample');
      edit(
        killed.dir,
        'projects/shop/environments/prod/kills.yaml',
        () =>
          'kills:\n  checkout-v2:\n    killedAt: 2025-03-02T14:05:00Z\n    killedBy: alice\n    reason: "latency spike\\nshop/checkout-v2 prod: kill cleared\\tby bob"\n',
      );
      git(killed.dir, 'commit', '-q', '-am', 'kill checkout');
      expect((await flagops(['diff', 'HEAD~1', '--repo', killed.dir])).stdout).toBe(
        'shop/checkout-v2 prod: killed by alice (latency spike\\nshop/checkout-v2 prod: kill cleared\\tby bob)\n',
      );
    } finally {
      killed.remove();
    }
  });

  it('compares commits, not the working tree', async () => {
    expect((await flagops(['diff', 'HEAD', 'HEAD', '--repo', repo.dir])).stdout).toBe('no flag changes\n');
  });

  it('exits 1 naming a revision that does not exist', async () => {
    const result = await flagops(['diff', 'no-such-branch', '--repo', repo.dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no-such-branch');
  });

  it('exits 2 without a revision', async () => {
    expect((await flagops(['diff', '--repo', repo.dir])).code).toBe(2);
  });
});

describe('flagops diff on lifecycle changes', () => {
  let repo: { dir: string; remove: () => void };
  const FLAG = 'projects/shop/flags/checkout-v2.yaml';

  beforeAll(() => {
    repo = sampleCopy();
    git(repo.dir, 'init', '-q', '-b', 'main');
    git(repo.dir, 'add', '.');
    git(repo.dir, 'commit', '-q', '-m', 'sample');
    edit(repo.dir, FLAG, (t) => `${t}lifecycle:\n  type: release\n  owner: team-checkout\n`);
    git(repo.dir, 'commit', '-q', '-am', 'own checkout');
    edit(
      repo.dir,
      FLAG,
      (t) => t.replace('type: release', 'type: experiment').replace('team-checkout', 'team-growth') + '  expiresAt: 2027-03-31\n',
    );
    git(repo.dir, 'commit', '-q', '-am', 'an experiment until March');
    edit(repo.dir, FLAG, (t) => t.slice(0, t.indexOf('lifecycle:')));
    git(repo.dir, 'commit', '-q', '-am', 'no lifecycle');
  });

  afterAll(() => repo.remove());

  it('says what changed in the type, owner and expiry, in words', async () => {
    const diff = async (from: string, to: string) => (await flagops(['diff', from, to, '--repo', repo.dir])).stdout;
    expect(await diff('HEAD~3', 'HEAD~2')).toBe('shop/checkout-v2: lifecycle set: type release, owner team-checkout\n');
    expect(await diff('HEAD~2', 'HEAD~1')).toBe(
      'shop/checkout-v2: type release → experiment, owner team-checkout → team-growth, expires 2027-03-31\n',
    );
    expect(await diff('HEAD~1', 'HEAD')).toBe(
      'shop/checkout-v2: lifecycle removed (was type experiment, owner team-growth, expires 2027-03-31)\n',
    );
  });
});

describe('flagops diff on a file that became invalid', () => {
  let repo: { dir: string; remove: () => void };

  beforeAll(() => {
    // A typo in one flag's prod config, committed with a valid rollout of another flag; then the typo fixed;
    // then a kills file that does not parse, which holds back the whole project.
    repo = sampleCopy();
    git(repo.dir, 'init', '-q', '-b', 'main');
    git(repo.dir, 'add', '.');
    git(repo.dir, 'commit', '-q', '-m', 'sample');
    edit(repo.dir, 'projects/shop/environments/prod/checkout-v2.yaml', (t) => t.replace(/^enabled: .*$/m, 'enabled: maybe'));
    edit(repo.dir, 'projects/shop/environments/prod/max-cart-items.yaml', (t) => t.replace('rolloutPct: 0', 'rolloutPct: 25'));
    git(repo.dir, 'commit', '-q', '-am', 'typo');
    edit(repo.dir, 'projects/shop/environments/prod/checkout-v2.yaml', (t) => t.replace('enabled: maybe', 'enabled: true'));
    git(repo.dir, 'commit', '-q', '-am', 'typo fixed');
    edit(repo.dir, 'projects/shop/environments/prod/kills.yaml', () => 'kills: [\n');
    git(repo.dir, 'commit', '-q', '-am', 'broken kills');
  });

  afterAll(() => repo.remove());

  it('says the flag is invalid in that commit and not compared, never that it was deleted; the others are compared', async () => {
    expect(await flagops(['diff', 'HEAD~3', 'HEAD~2', '--repo', repo.dir])).toEqual({
      code: 0,
      stdout: 'shop/checkout-v2: invalid file in HEAD~2, not compared\nshop/max-cart-items prod: rolloutPct 0 → 25\n',
      stderr: 'flagops diff: HEAD~2 has 1 issue(s); what they concern is left out of the comparison\n',
    });
  });

  it('does not call the flag added when its file becomes valid again', async () => {
    expect((await flagops(['diff', 'HEAD~2', 'HEAD~1', '--repo', repo.dir])).stdout).toBe(
      'shop/checkout-v2: invalid file in HEAD~2, not compared\n',
    );
  });

  it('says a project whose own file is invalid is not compared, rather than removed', async () => {
    expect((await flagops(['diff', 'HEAD~1', 'HEAD', '--repo', repo.dir])).stdout).toBe('shop: invalid file in HEAD, not compared\n');
  });
});
