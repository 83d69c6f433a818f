import type { EnvironmentName } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { authorize, can, PERMISSIONS, type Permission } from '../../src/foundations/auth/permissions.js';
import type { PrincipalKind } from '../../src/foundations/auth/principal.js';
import { ForbiddenError } from '../../src/foundations/errors/kinds.js';

const KINDS: PrincipalKind[] = ['admin', 'session', 'agent', 'sdk'];

// Contract §5, restated independently of src/foundations/auth/permissions.ts so that a wrong table fails here.
//                                        admin  session agent  sdk
const EXPECTED: Array<[Permission, EnvironmentName | undefined, [boolean, boolean, boolean, boolean]]> = [
  ['read', undefined, [true, true, true, false]],
  ['project.create', undefined, [true, true, false, false]],
  ['project.update', undefined, [true, true, false, false]],
  ['project.delete', undefined, [true, true, false, false]],
  ['flag.create', undefined, [true, true, true, false]],
  ['flag.update', undefined, [true, true, true, false]],
  ['flag.archive', undefined, [true, true, false, false]],
  ['flag.delete', undefined, [true, true, false, false]],
  ['config.update', undefined, [true, true, true, false]],
  ['segment.update', undefined, [true, true, true, false]],
  ['kill', undefined, [true, true, true, false]],
  ['clear_kill', undefined, [true, true, true, false]],
  ['promote', 'dev', [true, true, true, false]],
  ['promote', 'staging', [true, true, true, false]],
  ['promote', 'prod', [true, true, false, false]],
  ['proposal.decide', undefined, [true, true, false, false]],
  ['keys.manage', undefined, [true, false, false, false]],
  ['triggers.manage', undefined, [true, true, false, false]],
  ['webhooks.manage', undefined, [true, true, false, false]],
  ['audit.read', undefined, [true, true, true, false]],
  ['stats.read', undefined, [true, true, true, false]],
  ['replication', undefined, [true, false, false, false]],
  ['git', undefined, [true, false, true, false]],
];

const cases = EXPECTED.flatMap(([permission, environment, allowed]) =>
  KINDS.map((kind, i) => ({ kind, permission, environment, allowed: allowed[i] })),
);

describe('the permission table', () => {
  it('covers every permission', () => {
    expect(new Set(EXPECTED.map(([p]) => p))).toEqual(new Set(PERMISSIONS));
  });

  it.each(cases)('$kind → $permission $environment: allowed=$allowed', ({ kind, permission, environment, allowed }) => {
    const context = environment ? { environment } : {};
    expect(can({ kind }, permission, context)).toBe(allowed);
    if (allowed) expect(() => authorize({ kind }, permission, context)).not.toThrow();
    else expect(() => authorize({ kind }, permission, context)).toThrow(ForbiddenError);
  });
});

describe('a refusal', () => {
  it('names what the credential may not do and who may', () => {
    expect(() => authorize({ kind: 'agent' }, 'keys.manage')).toThrow('an agent key may not manage keys; it needs an admin key');
    expect(() => authorize({ kind: 'agent' }, 'project.create')).toThrow(
      'an agent key may not create projects; it needs an admin key or a session',
    );
  });

  it('explains that promoting into prod needs an admin key or a session', () => {
    expect(() => authorize({ kind: 'agent' }, 'promote', { environment: 'prod' })).toThrow(
      'an agent key may not promote configs into prod (promoting into prod is a deploy); it needs an admin key or a session',
    );
  });

  it('carries the forbidden code', () => {
    try {
      authorize({ kind: 'session' }, 'keys.manage');
      expect.unreachable();
    } catch (err) {
      expect((err as ForbiddenError).code).toBe('forbidden');
    }
  });
});

describe('a promote check without its destination', () => {
  it('fails closed instead of granting', () => {
    expect(() => authorize({ kind: 'agent' }, 'promote')).toThrow(TypeError);
  });
});
