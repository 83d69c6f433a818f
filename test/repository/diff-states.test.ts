import { describe, expect, it } from 'vitest';
import { diffStates, formatChanges, readRepositoryFiles } from '../../src/foundations/repository/index.js';
import { entries, validRepository } from './repo-fixture.js';

const PROD = 'projects/shop/environments/prod/checkout-v2.yaml';
const BASE_CONFIG =
  'enabled: true\nrolloutPct: 10\nvalueOn: true\nvalueOff: false\nversion: 4\nrules:\n  - id: staff\n    serve: on\n    conditions:\n      - attribute: email\n        op: contains\n        value: "@example.com"\n';

function repo(change: (files: Record<string, string>) => void = () => {}) {
  const files = validRepository();
  files[PROD] = BASE_CONFIG;
  change(files);
  const { state, issues } = readRepositoryFiles(entries(files), null);
  expect(issues).toEqual([]);
  return state;
}

/** The formatted diff between the base repository and the base with `change` applied. */
function diff(change: (files: Record<string, string>) => void): string {
  return formatChanges(diffStates(repo(), repo(change)));
}

describe('the difference between two states, in words', () => {
  it('is "no flag changes" for equal states, and ignores a version bump alone', () => {
    expect(diff(() => {})).toBe('no flag changes');
    expect(diff((f) => (f[PROD] = BASE_CONFIG.replace('version: 4', 'version: 5')))).toBe('no flag changes');
  });

  it('names rollout, an added rule and a kill on one line per flag and environment', () => {
    const text = diff((f) => {
      f[PROD] = `${BASE_CONFIG.replace('rolloutPct: 10', 'rolloutPct: 50')}  - id: beta-users\n    serve: on\n    conditions: []\n`;
      f['projects/shop/environments/prod/kills.yaml'] =
        'kills:\n  checkout-v2:\n    killedAt: 2025-03-02T14:05:00Z\n    killedBy: deploy-bot\n    reason: error rate\n';
    });
    expect(text).toBe('shop/checkout-v2 prod: killed by deploy-bot (error rate); rolloutPct 10 → 50; rule beta-users added');
  });

  it('says how a schedule changed and what its next step does', () => {
    const schedule = (...steps: string[]) => `schedule:\n${steps.join('')}`;
    const step = (at: string, set: string) => `  - at: ${at}\n    set: { ${set} }\n`;
    const three = schedule(
      step('2026-11-24T09:00:00Z', 'rolloutPct: 25'),
      step('2026-11-25T09:00:00Z', 'rolloutPct: 50'),
      step('2026-11-27T09:00:30Z', 'enabled: true, rolloutPct: 100'),
    );
    expect(diff((f) => (f[PROD] = BASE_CONFIG + three))).toBe(
      'shop/checkout-v2 prod: schedule: 3 steps added; next 2026-11-24 09:00Z → rollout 25 %',
    );
    const before = (f: Record<string, string>) => (f[PROD] = BASE_CONFIG + three);
    const applied =
      BASE_CONFIG.replace('rolloutPct: 10', 'rolloutPct: 25') +
      schedule(step('2026-11-25T09:00:00Z', 'rolloutPct: 50'), step('2026-11-27T09:00:30Z', 'enabled: true, rolloutPct: 100'));
    expect(
      formatChanges(
        diffStates(
          repo(before),
          repo((f) => (f[PROD] = applied)),
        ),
      ),
    ).toBe('shop/checkout-v2 prod: rolloutPct 10 → 25; schedule: 1 step removed; next 2026-11-25 09:00Z → rollout 50 %');
    expect(formatChanges(diffStates(repo(before), repo()))).toBe('shop/checkout-v2 prod: schedule: 3 steps removed, none left');
    const last = BASE_CONFIG + schedule(step('2026-11-27T09:00:30Z', 'enabled: true, rolloutPct: 100'));
    const moved = BASE_CONFIG + schedule(step('2026-11-28T09:00:30Z', 'enabled: false'));
    expect(
      formatChanges(
        diffStates(
          repo((f) => (f[PROD] = last)),
          repo((f) => (f[PROD] = moved)),
        ),
      ),
    ).toBe('shop/checkout-v2 prod: schedule: 1 step added, 1 step removed; next 2026-11-28 09:00:30Z → disabled');
  });

  it('says enabled and disabled', () => {
    expect(diff((f) => (f[PROD] = BASE_CONFIG.replace('enabled: true', 'enabled: false')))).toBe('shop/checkout-v2 prod: disabled');
  });

  it('shows changed values', () => {
    expect(diff((f) => (f[PROD] = BASE_CONFIG.replace('valueOff: false', 'valueOff: true')))).toBe(
      'shop/checkout-v2 prod: valueOff false → true',
    );
  });

  it('names a removed rule and what changed in a kept one', () => {
    expect(
      diff(
        (f) => (f[PROD] = BASE_CONFIG.replace('serve: on', 'serve: off\n    rolloutPct: 20').replace('"@example.com"', '"@example.org"')),
      ),
    ).toBe('shop/checkout-v2 prod: rule staff changed (serve on → off, rolloutPct (none) → 20, conditions changed)');
    expect(diff((f) => (f[PROD] = BASE_CONFIG.replace(/rules:[\s\S]*$/, 'rules: []\n')))).toBe('shop/checkout-v2 prod: rule staff removed');
  });

  it('notices rules that swapped places, since the first match wins', () => {
    const two = `${BASE_CONFIG}  - id: beta\n    serve: off\n`;
    const swapped =
      'enabled: true\nrolloutPct: 10\nvalueOn: true\nvalueOff: false\nversion: 4\nrules:\n  - id: beta\n    serve: off\n  - id: staff\n    serve: on\n    conditions:\n      - attribute: email\n        op: contains\n        value: "@example.com"\n';
    const before = repo((f) => (f[PROD] = two));
    const after = repo((f) => (f[PROD] = swapped));
    expect(formatChanges(diffStates(before, after))).toBe('shop/checkout-v2 prod: rules reordered');
  });

  it('says when a kill is cleared', () => {
    const killed = (f: Record<string, string>) => {
      f['projects/shop/environments/dev/kills.yaml'] = 'kills:\n  search:\n    killedAt: 2025-03-02T14:05:00Z\n    killedBy: alice\n';
    };
    expect(formatChanges(diffStates(repo(killed), repo()))).toBe('shop/search dev: kill cleared');
  });

  it('reports flag metadata on its own line: archived, unarchived, renamed, kind', () => {
    expect(diff((f) => (f['projects/shop/flags/search.yaml'] = 'key: search\narchivedAt: 2025-01-15T09:30:00Z\n'))).toBe(
      'shop/search: archived',
    );
    expect(
      formatChanges(
        diffStates(
          repo((f) => (f['projects/shop/flags/search.yaml'] = 'key: search\narchivedAt: 2025-01-15T09:30:00Z\n')),
          repo(),
        ),
      ),
    ).toBe('shop/search: unarchived');
    expect(diff((f) => (f['projects/shop/flags/search.yaml'] = 'key: search\nname: Search\n'))).toBe('shop/search: name (none) → "Search"');
    expect(diff((f) => (f['projects/shop/flags/search.yaml'] = 'key: search\ndescription: Ranking\n'))).toBe(
      'shop/search: description changed',
    );
  });

  it("says how a flag's lifecycle changed: type, owner and expiry in words", () => {
    const SEARCH = 'projects/shop/flags/search.yaml';
    const lifecycle = (lines: string) => (f: Record<string, string>) => (f[SEARCH] = `key: search\nlifecycle:\n${lines}`);
    const release = lifecycle('  type: release\n  owner: team-search\n');
    expect(diff(lifecycle('  type: experiment\n  owner: team-search\n  expiresAt: 2027-03-31\n'))).toBe(
      'shop/search: lifecycle set: type experiment, owner team-search, expires 2027-03-31',
    );
    const between = (before: (f: Record<string, string>) => void, after: (f: Record<string, string>) => void) =>
      formatChanges(diffStates(repo(before), repo(after)));
    expect(between(release, lifecycle('  type: experiment\n  owner: team-search\n  expiresAt: 2027-03-31\n'))).toBe(
      'shop/search: type release → experiment, expires 2027-03-31',
    );
    expect(between(lifecycle('  type: release\n'), release)).toBe('shop/search: owner set to team-search');
    expect(between(release, lifecycle('  type: release\n  owner: team-growth\n  expiresAt: 2027-06-30T12:00:00Z\n'))).toBe(
      'shop/search: owner team-search → team-growth, expires 2027-06-30T12:00:00Z',
    );
    expect(between(lifecycle('  owner: team-search\n  expiresAt: 2027-03-31\n'), lifecycle('  expiresAt: 2027-04-30\n'))).toBe(
      'shop/search: owner team-search removed, expiry 2027-03-31 → 2027-04-30',
    );
    expect(between(release, () => {})).toBe('shop/search: lifecycle removed (was type release, owner team-search)');
    // A lifecycle without a type is a release flag's: the same state as one that says so.
    expect(between(lifecycle('  owner: team-search\n'), release)).toBe('no flag changes');
  });

  it('shows the lifecycle of an added flag beside it', () => {
    const text = diff((f) => {
      f['projects/shop/flags/banner.yaml'] = 'key: banner\nlifecycle: { type: kill-switch, owner: sre }\n';
      for (const env of ['dev', 'staging', 'prod'])
        f[`projects/shop/environments/${env}/banner.yaml`] = 'enabled: false\nrolloutPct: 0\nvalueOn: true\nvalueOff: false\n';
    });
    expect(text).toBe('shop/banner: flag added (boolean); lifecycle set: type kill-switch, owner sre');
  });

  it('reports an added flag with what goes live in each environment, compared with a new flag (off at 0%)', () => {
    const text = diff((f) => {
      f['projects/shop/flags/banner.yaml'] = 'key: banner\nkind: string\n';
      f['projects/shop/environments/dev/banner.yaml'] = 'enabled: true\nrolloutPct: 100\nvalueOn: a\nvalueOff: b\n';
      f['projects/shop/environments/staging/banner.yaml'] = 'enabled: false\nrolloutPct: 0\nvalueOn: a\nvalueOff: b\n';
      f['projects/shop/environments/prod/banner.yaml'] = 'enabled: false\nrolloutPct: 0\nvalueOn: a\nvalueOff: b\n';
    });
    expect(text).toBe('shop/banner: flag added (string)\nshop/banner dev: enabled; rolloutPct 0 → 100');
  });

  it('reports a deleted flag once', () => {
    expect(
      diff((f) => {
        for (const path of Object.keys(f)) if (path.endsWith('/search.yaml')) delete f[path];
      }),
    ).toBe('shop/search: flag deleted');
  });

  it('reports added and removed projects', () => {
    const withWeb = (f: Record<string, string>) => {
      f['projects/web/project.yaml'] = 'name: Web\nslug: web\n';
    };
    expect(diff(withWeb)).toBe('web: project added');
    expect(formatChanges(diffStates(repo(withWeb), repo()))).toBe('web: project removed with its 0 flag(s)');
  });

  it("says how a project's budgets changed, per environment", () => {
    const budgets = (text: string) => (f: Record<string, string>) => {
      f['projects/shop/project.yaml'] = `${f['projects/shop/project.yaml']}budgets:\n${text}`;
    };
    const before = budgets('  prod:\n    movedPctPerHour: 10\n    actors: [agent]\n');
    const after = budgets(
      '  prod:\n    movedPctPerHour: 5\n    actors: [session, agent]\n  dev:\n    movedPctPerHour: 100\n    actors: [agent]\n',
    );
    expect(formatChanges(diffStates(repo(before), repo(after)))).toBe(
      'shop: budget in dev: none → agent 100 %/h; budget in prod: agent 10 %/h → agent, session 5 %/h',
    );
    expect(formatChanges(diffStates(repo(before), repo()))).toBe('shop: budget in prod: agent 10 %/h → none');
  });

  it("says whose changes need approval, per environment, when a project's requireApproval changes", () => {
    const approval = (text: string) => (f: Record<string, string>) => {
      f['projects/shop/project.yaml'] = `${f['projects/shop/project.yaml']}requireApproval:\n${text}`;
    };
    const before = approval('  prod: [agent]\n');
    const after = approval('  prod: [agent, admin]\n  staging: [agent]\n');
    expect(formatChanges(diffStates(repo(), repo(before)))).toBe('shop: approval needed in prod: none → agent');
    expect(formatChanges(diffStates(repo(before), repo(after)))).toBe(
      'shop: approval needed in staging: none → agent; approval needed in prod: agent → admin, agent',
    );
    // A pull request that drops the requirement must not read as "no flag changes".
    expect(formatChanges(diffStates(repo(after), repo()))).toBe(
      'shop: approval needed in staging: agent → none; approval needed in prod: admin, agent → none',
    );
  });

  it('lists changes in a stable order: project, flag, then dev, staging, prod', () => {
    const text = diff((f) => {
      for (const env of ['prod', 'dev'])
        f[`projects/shop/environments/${env}/search.yaml`] = 'enabled: false\nrolloutPct: 100\nvalueOn: true\nvalueOff: false\n';
      f[PROD] = BASE_CONFIG.replace('rolloutPct: 10', 'rolloutPct: 0');
    });
    expect(text.split('\n')).toEqual([
      'shop/checkout-v2 prod: rolloutPct 10 → 0',
      'shop/search dev: disabled',
      'shop/search prod: disabled',
    ]);
  });
});
