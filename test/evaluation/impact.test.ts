import {
  compileEnvironment,
  type EnvironmentConfig,
  type FlagState,
  type ProjectState,
  type SegmentFile,
  type SnapshotFlag,
} from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { computeImpact } from '../../src/features/proposals/impact.js';

/**
 * The impact function against brute force: the real core evaluates 10,000 userId-only contexts on both
 * sides and counts whose variation changed. The brute force samples 10,000 users where the impact counts the
 * whole bucket space, so they agree within sampling error: four standard deviations of a share p measured
 * over n = 10,000 users, 400·sqrt(p(1−p)/n) percentage points (at most 2).
 */
const USERS = Array.from({ length: 10_000 }, (_, i) => `user-${i}`);

function config(extra: Partial<EnvironmentConfig> = {}): EnvironmentConfig {
  return { enabled: true, rolloutPct: 0, valueOn: true, valueOff: false, version: 1, rules: [], ...extra };
}

interface Side {
  flags: Record<string, { config: EnvironmentConfig; archived?: boolean; killed?: boolean }>;
  segments?: SegmentFile[];
}

function project(side: Side): ProjectState {
  const flags = new Map<string, FlagState>();
  for (const [key, f] of Object.entries(side.flags)) {
    flags.set(key, {
      meta: { id: `id-${key}`, key, kind: 'boolean', defaultValue: false, archivedAt: f.archived ? '2024-01-01T00:00:00Z' : null },
      environments: { dev: config(), staging: config(), prod: f.config },
    });
  }
  const kills = Object.fromEntries(
    Object.entries(side.flags).flatMap(([k, f]) => (f.killed ? [[k, { killedAt: 'x', killedBy: 'y' }]] : [])),
  );
  return {
    project: { id: 'p', name: 'shop', slug: 'shop' },
    flags,
    kills: { dev: { kills: {} }, staging: { kills: {} }, prod: { kills } },
    segments: new Map((side.segments ?? []).map((s) => [s.key, s])),
  };
}

/** The share (percent) of USERS whose served variation of `key` differs between the two sides, by move. */
function bruteForce(before: Side, after: Side, key: string): { moved: number; moves: Map<string, number> } {
  const compile = (side: Side) => {
    const flags: Record<string, SnapshotFlag> = {};
    for (const [k, f] of Object.entries(side.flags))
      flags[k] = { ...f.config, killed: f.killed === true, archived: f.archived === true, defaultValue: false };
    const segments = Object.fromEntries((side.segments ?? []).map((s) => [s.key, { userIds: s.userIds, conditions: s.conditions }]));
    return compileEnvironment(flags, segments);
  };
  const a = compile(before);
  const b = compile(after);
  const moves = new Map<string, number>();
  let moved = 0;
  for (const userId of USERS) {
    const from = a.evaluate(key, { userId }).variation as string;
    const to = b.evaluate(key, { userId }).variation as string;
    if (from === to) continue;
    moved++;
    moves.set(`${from}→${to}`, (moves.get(`${from}→${to}`) ?? 0) + 1);
  }
  const pct = (n: number) => (n * 100) / USERS.length;
  return { moved: pct(moved), moves: new Map([...moves].map(([k, n]) => [k, pct(n)])) };
}

function tolerance(pct: number): number {
  const p = pct / 100;
  return 400 * Math.sqrt((p * (1 - p)) / USERS.length) + 0.01;
}

function expectAgreement(before: Side, after: Side, key = 'checkout') {
  const [entry] = computeImpact(project(before), project(after), { flagKey: key, environment: 'prod' });
  expect(entry.exact).toBe(true);
  const brute = bruteForce(before, after, key);
  expect(Math.abs(entry.movedPct! - brute.moved)).toBeLessThanOrEqual(tolerance(entry.movedPct!));
  const exactMoves = new Map(entry.moves.map((m) => [`${m.from}→${m.to}`, m.pct]));
  for (const name of new Set([...exactMoves.keys(), ...brute.moves.keys()])) {
    const exact = exactMoves.get(name) ?? 0;
    expect(Math.abs(exact - (brute.moves.get(name) ?? 0)), name).toBeLessThanOrEqual(tolerance(exact));
  }
  return entry;
}

const AB = (control: number) => [
  { name: 'control', value: false, weight: control },
  { name: 'treatment', value: true, weight: 100 - control },
];

describe('computeImpact against brute force over 10,000 user ids', () => {
  it('a rollout from 10 % to 25 % moves 15.00 % of users from off to on', () => {
    const entry = expectAgreement(
      { flags: { checkout: { config: config({ rolloutPct: 10 }) } } },
      { flags: { checkout: { config: config({ rolloutPct: 25 }) } } },
    );
    expect(entry).toEqual({
      environment: 'prod',
      flagKey: 'checkout',
      exact: true,
      movedPct: 15,
      moves: [{ from: 'off', to: 'on', pct: 15 }],
    });
  });

  it('a rollout going down moves users from on to off', () => {
    const entry = expectAgreement(
      { flags: { checkout: { config: config({ rolloutPct: 62.5 }) } } },
      { flags: { checkout: { config: config({ rolloutPct: 12.25 }) } } },
    );
    expect(entry.moves).toEqual([{ from: 'on', to: 'off', pct: 50.25 }]);
  });

  it('variant weights 50/50 → 30/70 move 20 % of the served users from control to treatment', () => {
    const entry = expectAgreement(
      { flags: { checkout: { config: config({ rolloutPct: 100, variants: AB(50) }) } } },
      { flags: { checkout: { config: config({ rolloutPct: 100, variants: AB(30) }) } } },
    );
    expect(entry.moves).toEqual([{ from: 'control', to: 'treatment', pct: 20 }]);
  });

  it('rollout and variant weights changing together: the joint space is the product of the two', () => {
    const entry = expectAgreement(
      { flags: { checkout: { config: config({ rolloutPct: 40, variants: AB(50) }) } } },
      { flags: { checkout: { config: config({ rolloutPct: 80, variants: AB(25) }) } } },
    );
    // [0,40) × [25,50): control → treatment (10 %); [40,80) × all: off → control 20 %, off → treatment 20 %.
    expect(entry.moves).toEqual(
      [
        { from: 'off', to: 'control', pct: 10 },
        { from: 'off', to: 'treatment', pct: 30 },
        { from: 'control', to: 'treatment', pct: 10 },
      ].sort((x, y) => y.pct - x.pct || x.from.localeCompare(y.from)),
    );
    expect(entry.movedPct).toBe(50);
  });

  it('enabling a flag at 30 % moves 30 % from off to on; disabling it moves them back', () => {
    const off = { flags: { checkout: { config: config({ enabled: false, rolloutPct: 30 }) } } };
    const on = { flags: { checkout: { config: config({ rolloutPct: 30 }) } } };
    expect(expectAgreement(off, on).moves).toEqual([{ from: 'off', to: 'on', pct: 30 }]);
    expect(expectAgreement(on, off).moves).toEqual([{ from: 'on', to: 'off', pct: 30 }]);
  });

  it('unchanged rules that catch every user first (a rule with rolloutPct and no conditions) shrink what a rollout moves', () => {
    const rules = [{ id: 'half', conditions: [], serve: 'off', rolloutPct: 50 }];
    const entry = expectAgreement(
      { flags: { checkout: { config: config({ rolloutPct: 20, rules }) } } },
      { flags: { checkout: { config: config({ rolloutPct: 80, rules }) } } },
    );
    // The rule serves off below bucket 50; the rollout decides [50, 100): [50, 80) moves.
    expect(entry.moves).toEqual([{ from: 'off', to: 'on', pct: 30 }]);
  });

  it('unchanged rules on attributes a userId-only context lacks catch nobody; neq on userId catches everyone', () => {
    const rules = [
      { id: 'beta', conditions: [{ attribute: 'plan', op: 'eq' as const, value: 'beta' }], serve: 'on' },
      { id: 'staff', conditions: [{ attribute: 'userId', op: 'neq' as const, value: 'nobody' }], serve: 'on', rolloutPct: 10 },
    ];
    const entry = expectAgreement(
      { flags: { checkout: { config: config({ rolloutPct: 0, rules }) } } },
      { flags: { checkout: { config: config({ rolloutPct: 40, rules }) } } },
    );
    expect(entry.moves).toEqual([{ from: 'off', to: 'on', pct: 30 }]);
  });

  it('an unchanged prerequisite counts the share its flag passes', () => {
    const gate = { config: config({ rolloutPct: 50 }) };
    const prerequisites = [{ flag: 'gate', variation: 'on' }];
    const entry = expectAgreement(
      { flags: { gate, checkout: { config: config({ rolloutPct: 0, prerequisites }) } } },
      { flags: { gate, checkout: { config: config({ rolloutPct: 100, prerequisites }) } } },
    );
    expect(entry.movedPct).toBe(50);
  });

  it('a kill is not a config change: no entry; a config change of a killed flag is what it does once the kill is cleared', () => {
    const before = project({ flags: { checkout: { config: config({ rolloutPct: 10 }) } } });
    const killed = project({ flags: { checkout: { config: config({ rolloutPct: 10 }), killed: true } } });
    expect(computeImpact(before, killed)).toEqual([]);
    const killedLater = project({ flags: { checkout: { config: config({ rolloutPct: 25 }), killed: true } } });
    expect(computeImpact(killed, killedLater)[0]).toMatchObject({ exact: true, movedPct: 15 });
  });

  it('a version bump alone is no change', () => {
    const a = project({ flags: { checkout: { config: config({ rolloutPct: 10, version: 1 }) } } });
    const b = project({ flags: { checkout: { config: config({ rolloutPct: 10, version: 2 }) } } });
    expect(computeImpact(a, b)).toEqual([]);
  });
});

describe('computeImpact is not exact', () => {
  const rule = (value: string) => ({ id: 'r', conditions: [{ attribute: 'country', op: 'eq' as const, value }], serve: 'on' });

  it('when the rules changed', () => {
    const a = project({ flags: { checkout: { config: config({ rules: [rule('DE')] }) } } });
    const b = project({ flags: { checkout: { config: config({ rules: [rule('FR')] }) } } });
    expect(computeImpact(a, b)).toEqual([{ environment: 'prod', flagKey: 'checkout', exact: false, movedPct: null, moves: [] }]);
  });

  it('when a segment the rules use changed, though the config did not', () => {
    const rules = [{ id: 'r', conditions: [{ op: 'in_segment' as const, value: 'beta' }], serve: 'on' }];
    const segment = (userIds: string[]): SegmentFile => ({ key: 'beta', version: 1, userIds, conditions: [] });
    const a = project({ flags: { checkout: { config: config({ rules }) } }, segments: [segment(['a'])] });
    const b = project({ flags: { checkout: { config: config({ rules }) } }, segments: [segment(['a', 'b'])] });
    expect(computeImpact(a, b)).toEqual([{ environment: 'prod', flagKey: 'checkout', exact: false, movedPct: null, moves: [] }]);
  });

  it('when the prerequisites changed', () => {
    const gate = { config: config({ rolloutPct: 50 }) };
    const a = project({ flags: { gate, checkout: { config: config() } } });
    const b = project({ flags: { gate, checkout: { config: config({ prerequisites: [{ flag: 'gate', variation: 'on' }] }) } } });
    expect(computeImpact(a, b, { flagKey: 'checkout' })[0]).toMatchObject({ exact: false, movedPct: null });
  });

  it('when an unchanged rule matches by the text of the user id', () => {
    const rules = [{ id: 'r', conditions: [{ attribute: 'userId', op: 'contains' as const, value: '7' }], serve: 'on' }];
    const a = project({ flags: { checkout: { config: config({ rules, rolloutPct: 10 }) } } });
    const b = project({ flags: { checkout: { config: config({ rules, rolloutPct: 20 }) } } });
    expect(computeImpact(a, b)[0]).toMatchObject({ exact: false, movedPct: null });
  });
});
