import { describe, expect, it } from 'vitest';
import { envCell, filterFlags, killedEntries, sortFlags } from '../../../packages/dashboard/src/logic/flag-cells.js';
import type { EnvironmentConfigView, FlagView } from '../../../packages/dashboard/src/types.js';

const config = (over: Partial<EnvironmentConfigView> = {}): EnvironmentConfigView => ({
  enabled: false,
  rolloutPct: 0,
  valueOn: true,
  valueOff: false,
  version: 1,
  rules: [],
  killed: false,
  schedule: [],
  nextStep: null,
  ...over,
});
const flag = (key: string, over: Partial<FlagView> = {}, prod: Partial<EnvironmentConfigView> = {}): FlagView => ({
  id: `flg_${key}`,
  key,
  name: key,
  description: '',
  kind: 'boolean',
  defaultValue: false,
  archivedAt: null,
  projectId: 'prj',
  projectSlug: 'shop',
  environments: { dev: config(), staging: config(), prod: config(prod) },
  ...over,
});

describe('a flags table cell', () => {
  it('shows ON with its rollout and rules count', () => {
    const rule = { id: 'r', serve: 'on' as const, conditions: [] };
    expect(envCell(config({ enabled: true, rolloutPct: 25, rules: [rule, { ...rule, id: 'r2' }] }))).toMatchObject({
      state: 'on',
      label: 'ON',
      rollout: '25%',
      rules: '2 rules',
    });
  });

  it('shows OFF without a rollout (a disabled flag serves nothing of it)', () => {
    expect(envCell(config({ rolloutPct: 40 }))).toMatchObject({ state: 'off', label: 'OFF', rollout: '', rules: '' });
  });

  it('shows KILLED over everything else, saying who and why', () => {
    const cell = envCell(
      config({
        enabled: true,
        rolloutPct: 100,
        killed: true,
        killedBy: 'Alice Martin',
        killedAt: '2026-11-21T10:00:00Z',
        killReason: 'errors',
      }),
    );
    expect(cell).toMatchObject({ state: 'killed', label: 'KILLED', rollout: '' });
    expect(cell.title).toBe('killed by Alice Martin at 2026-11-21T10:00:00Z: errors; serves valueOff to everyone');
  });
});

describe('the flags list', () => {
  it('lists kills for the banner, prod first', () => {
    const a = flag('a', {}, { killed: true });
    const b = flag('b', { environments: { dev: config({ killed: true }), staging: config(), prod: config({ killed: true }) } });
    expect(killedEntries([a, b]).map((k) => `${k.flag.key}/${k.env}`)).toEqual(['a/prod', 'b/prod', 'b/dev']);
  });

  it('sorts active flags by key and puts archived ones last', () => {
    const flags = [flag('zeta'), flag('alpha', { archivedAt: '2026-01-01T00:00:00Z' }), flag('beta')];
    expect(sortFlags(flags).map((f) => f.key)).toEqual(['beta', 'zeta', 'alpha']);
  });

  it('filters by key or name, ignoring case', () => {
    const flags = [flag('checkout-v2', { name: 'New checkout' }), flag('banner')];
    expect(filterFlags(flags, 'CHECK').map((f) => f.key)).toEqual(['checkout-v2']);
    expect(filterFlags(flags, 'new').map((f) => f.key)).toEqual(['checkout-v2']);
    expect(filterFlags(flags, '  ')).toHaveLength(2);
  });
});
