import type { AuditEntry, ProjectFile } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { countedPct, isImportEntry, overBudget, spenderOf } from '../../src/features/budgets/budget-rules.js';

const project: ProjectFile = { id: 'p', name: 'Shop', slug: 'shop', budgets: { prod: { movedPctPerHour: 10, actors: ['agent'] } } };
const entry = (extra: Partial<AuditEntry>): AuditEntry => ({
  id: 'c'.repeat(40),
  at: '2026-05-04T09:00:00.000Z',
  action: 'config_update',
  projectSlug: 'shop',
  flagKey: 'checkout',
  environment: 'prod',
  actor: { type: 'agent', keyPrefix: 'svc_agt_x' },
  ...extra,
});

describe('a budget', () => {
  it('lets a change through up to the budget exactly, and keeps one past it with the figures', () => {
    expect(overBudget(project, 'prod', 'agent', 6, 4)).toBeNull();
    expect(overBudget(project, 'prod', 'agent', 0.1 + 0.2, 9.7)).toBeNull(); // sums are taken to two decimals
    expect(overBudget(project, 'prod', 'agent', 6, 4.01)).toEqual({
      environment: 'prod',
      actorType: 'agent',
      movedPctPerHour: 10,
      usedPct: 6,
      addsPct: 4.01,
      windowMinutes: 60,
    });
  });

  it('never keeps a change that moves nobody, nor one by an actor type or in an environment it does not list', () => {
    expect(overBudget(project, 'prod', 'agent', 50, 0)).toBeNull();
    expect(overBudget(project, 'prod', 'admin', 50, 50)).toBeNull();
    expect(overBudget(project, 'staging', 'agent', 50, 50)).toBeNull();
  });

  it('counts an impact that is not exact as 100, and none as 0', () => {
    expect(countedPct({ environment: 'prod', flagKey: 'f', exact: false, movedPct: null, moves: [] })).toBe(100);
    expect(countedPct({ environment: 'prod', flagKey: 'f', exact: true, movedPct: 12.5, moves: [] })).toBe(12.5);
    expect(countedPct(undefined)).toBe(0);
  });
});

describe('whose change an entry of main is', () => {
  it('is its actor for a config update or promotion, the proposer for an applied proposal, the key for a push', () => {
    expect(spenderOf(entry({}))).toBe('agent');
    expect(spenderOf(entry({ action: 'promote', actor: { type: 'session', name: 'alice' } }))).toBe('session');
    expect(spenderOf(entry({ actor: { type: 'admin' }, proposalId: 'p1', proposedBy: { type: 'agent' } }))).toBe('agent');
    expect(spenderOf(entry({ actor: { type: 'git', name: 'Erin' }, pushedBy: { type: 'agent', keyPrefix: 'svc_agt_x' } }))).toBe('agent');
  });

  it('is nobody for kills, cleared kills, scheduled steps, engineers outside the service and changes of no config', () => {
    for (const action of ['kill', 'clear_kill', 'scheduled_change', 'flag_create', 'segment_update'] as const)
      expect(spenderOf(entry({ action }))).toBeNull();
    expect(spenderOf(entry({ actor: { type: 'git', name: 'Erin' } }))).toBeNull();
    expect(spenderOf(entry({ environment: null }))).toBeNull();
  });
});

describe('an import', () => {
  const importTrailers = { action: 'import', actor: { type: 'admin', name: 'Ops' } } as const;

  it('is told by the trailers the audit trail believed, which made its entries the importer’s', () => {
    const imported = entry({ actor: { type: 'admin', name: 'Ops' } });
    expect(isImportEntry(imported, { flagops: importTrailers, unsignedFlagops: null })).toBe(true);
    expect(isImportEntry(imported, { flagops: null, unsignedFlagops: importTrailers })).toBe(true); // older than signing
    expect(isImportEntry(entry({}), { flagops: { ...importTrailers, action: 'config_update' }, unsignedFlagops: null })).toBe(false);
  });

  it('is not what a pushed commit that claims to be one is: it still counts for the key that pushed it', () => {
    const pushed = entry({ actor: { type: 'git', name: 'Erin' }, pushedBy: { type: 'agent', keyPrefix: 'svc_agt_x' } });
    expect(isImportEntry(pushed, { flagops: null, unsignedFlagops: importTrailers })).toBe(false);
  });
});
