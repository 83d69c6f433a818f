import type { EnvironmentName } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { authorize, authorizeOrProposal, can, type Grantee, PERMISSIONS, type Permission } from '../../src/foundations/auth/permissions.js';
import { ForbiddenError } from '../../src/foundations/errors/kinds.js';

type Row = Grantee & { label: string };
const HOLDER_ROWS: Row[] = [
  { label: 'admin key', kind: 'admin' },
  { label: 'session (admin role)', kind: 'session' },
  { label: 'agent key', kind: 'agent' },
  { label: 'sdk key', kind: 'sdk' },
  { label: 'editor session', kind: 'session', role: 'editor' },
  { label: 'viewer session', kind: 'session', role: 'viewer' },
];

// Contract §5 and §14, restated independently of src/foundations/auth/permissions.ts so that a wrong table fails here.
//                                        admin  session agent  sdk    editor viewer
const EXPECTED: Array<[Permission, EnvironmentName | undefined, [boolean, boolean, boolean, boolean, boolean, boolean]]> = [
  ['read', undefined, [true, true, true, false, true, true]],
  ['project.create', undefined, [true, true, false, false, false, false]],
  ['project.update', undefined, [true, true, false, false, false, false]],
  ['project.delete', undefined, [true, true, false, false, false, false]],
  ['flag.create', undefined, [true, true, true, false, true, false]],
  ['flag.update', undefined, [true, true, true, false, true, false]],
  ['flag.archive', undefined, [true, true, false, false, false, false]],
  ['flag.delete', undefined, [true, true, false, false, false, false]],
  ['config.update', undefined, [true, true, true, false, true, false]],
  ['segment.update', undefined, [true, true, true, false, true, false]],
  ['kill', undefined, [true, true, true, false, true, false]],
  ['clear_kill', undefined, [true, true, true, false, true, false]],
  ['promote', 'dev', [true, true, true, false, true, false]],
  ['promote', 'staging', [true, true, true, false, true, false]],
  ['promote', 'prod', [true, true, false, false, false, false]],
  ['proposal.decide', undefined, [true, true, false, false, false, false]],
  ['keys.manage', undefined, [true, false, false, false, false, false]],
  ['users.manage', undefined, [true, false, false, false, false, false]],
  ['triggers.manage', undefined, [true, true, false, false, false, false]],
  ['webhooks.manage', undefined, [true, true, false, false, false, false]],
  ['audit.read', undefined, [true, true, true, false, true, true]],
  ['stats.read', undefined, [true, true, true, false, true, true]],
  ['replication', undefined, [true, false, false, false, false, false]],
  ['git', undefined, [true, false, true, false, false, false]],
];

const cases = EXPECTED.flatMap(([permission, environment, allowed]) =>
  HOLDER_ROWS.map((row, i) => ({ row, label: row.label, permission, environment, allowed: allowed[i] })),
);

describe('the permission table', () => {
  it('covers every permission', () => {
    expect(new Set(EXPECTED.map(([p]) => p))).toEqual(new Set(PERMISSIONS));
  });

  it.each(cases)('$label → $permission $environment: allowed=$allowed', ({ row, permission, environment, allowed }) => {
    const context = environment ? { environment } : {};
    expect(can(row, permission, context)).toBe(allowed);
    if (allowed) expect(() => authorize(row, permission, context)).not.toThrow();
    else expect(() => authorize(row, permission, context)).toThrow(ForbiddenError);
  });
});

describe('a refusal', () => {
  it('names what the credential may not do and who may', () => {
    expect(() => authorize({ kind: 'agent' }, 'keys.manage')).toThrow('an agent key may not manage keys; it needs an admin key');
    expect(() => authorize({ kind: 'agent' }, 'project.create')).toThrow(
      'an agent key may not create projects; it needs an admin key or an admin session',
    );
  });

  it('explains that promoting into prod needs an admin key or a session', () => {
    expect(() => authorize({ kind: 'agent' }, 'promote', { environment: 'prod' })).toThrow(
      'an agent key may not promote configs into prod (promoting into prod is a deploy); it needs an admin key or an admin session',
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

describe('a credential with limits', () => {
  const shopOnly: Grantee = { kind: 'admin', scope: { projectIds: new Set(['prj_shop']) } };
  const devOnly: Grantee = { kind: 'agent', scope: { environments: new Set<EnvironmentName>(['dev']) } };

  it('may not use what reaches the whole organisation', () => {
    for (const permission of ['project.create', 'webhooks.manage', 'users.manage', 'replication'] as const) {
      expect(can(shopOnly, permission)).toBe(false);
      expect(can({ kind: 'admin' }, permission)).toBe(true);
    }
    expect(() => authorize(shopOnly, 'project.create')).toThrow(
      'an admin key limited to project prj_shop may not create projects: that reaches the whole organisation; it needs a credential without limits',
    );
  });

  it('counts an expiry as a limit for what reaches the whole organisation, and for nothing else', () => {
    const expiring: Grantee = { kind: 'admin', expiresAt: '2030-01-01T00:00:00.000Z' };
    for (const permission of ['project.create', 'webhooks.manage', 'users.manage', 'replication'] as const)
      expect(can(expiring, permission)).toBe(false);
    for (const permission of ['read', 'keys.manage', 'project.update', 'config.update', 'promote', 'git'] as const)
      expect(can(expiring, permission, { environment: 'prod' })).toBe(true);
    expect(() => authorize(expiring, 'users.manage')).toThrow(
      'an admin key expiring at 2030-01-01T00:00:00.000Z may not manage dashboard users: that reaches past its expiry; it needs a credential without limits',
    );
  });

  it('keeps what the table grants within its projects (which are filtered elsewhere)', () => {
    for (const permission of ['read', 'config.update', 'kill', 'keys.manage', 'git'] as const)
      expect(can(shopOnly, permission, { environment: 'prod' })).toBe(true);
  });

  it('changes only its environments, and nothing that acts in every environment', () => {
    expect(can(devOnly, 'config.update', { environment: 'dev' })).toBe(true);
    expect(can(devOnly, 'kill', { environment: 'dev' })).toBe(true);
    expect(can(devOnly, 'config.update', { environment: 'prod' })).toBe(false);
    expect(can(devOnly, 'kill', { environment: 'staging' })).toBe(false);
    expect(can(devOnly, 'promote', { environment: 'staging' })).toBe(false);
    expect(can(devOnly, 'flag.create')).toBe(true);
    expect(can(devOnly, 'read')).toBe(true);
    for (const permission of ['flag.update', 'flag.archive', 'segment.update', 'project.update'] as const)
      expect(can(devOnly, permission)).toBe(false);
    expect(() => authorize(devOnly, 'kill', { environment: 'prod' })).toThrow(
      'an agent key limited to environment dev may not kill flags in prod',
    );
  });

  it('fails closed when the environment of an environment-limited write is unknown', () => {
    expect(() => authorize(devOnly, 'config.update')).toThrow(TypeError);
    expect(can(devOnly, 'config.update', { environmentLater: true })).toBe(true);
  });

  it('holds a role limited to projects to the same table as its role', () => {
    const editorShop: Grantee = { kind: 'session', role: 'editor', scope: { projectSlugs: new Set(['shop']) } };
    expect(can(editorShop, 'config.update', { environment: 'prod' })).toBe(true);
    expect(can(editorShop, 'promote', { environment: 'prod' })).toBe(false);
    expect(can(editorShop, 'project.create')).toBe(false);
    expect(() => authorize({ kind: 'session', role: 'viewer' }, 'kill', { environment: 'dev' })).toThrow(
      'a viewer session may not kill flags; it needs an admin key, an agent key, an admin session or an editor session',
    );
  });
});

describe('a change that may wait as a proposal', () => {
  const viewer: Grantee = { kind: 'session', role: 'viewer' };
  const editor: Grantee = { kind: 'session', role: 'editor' };

  it('is granted at once to whoever the table grants it', () => {
    expect(authorizeOrProposal({ kind: 'admin' }, 'promote', { environment: 'prod' })).toBeUndefined();
    expect(authorizeOrProposal({ kind: 'agent' }, 'promote', { environment: 'staging' })).toBeUndefined();
  });

  it('is a proposal only for what the table grants only as one: promotion into prod and archive, of agent keys and editors', () => {
    for (const who of [{ kind: 'agent' } as Grantee, editor]) {
      expect(authorizeOrProposal(who, 'promote', { environment: 'prod' })).toBeInstanceOf(ForbiddenError);
      expect(authorizeOrProposal(who, 'flag.archive')).toBeInstanceOf(ForbiddenError);
    }
  });

  it('is refused outright to a viewer, in every environment: a proposal is a change too', () => {
    for (const environment of ['dev', 'staging', 'prod'] as const)
      expect(() => authorizeOrProposal(viewer, 'promote', { environment })).toThrow('a viewer session may not promote configs');
    expect(() => authorizeOrProposal(viewer, 'flag.archive')).toThrow('a viewer session may not archive flags');
    expect(() => authorizeOrProposal({ ...viewer, scope: { projectSlugs: new Set(['shop']) } }, 'flag.archive')).toThrow(ForbiddenError);
  });

  it("is refused outside the credential's environments, which a proposal never waives", () => {
    const devAgent: Grantee = { kind: 'agent', scope: { environments: new Set<EnvironmentName>(['dev']) } };
    expect(() => authorizeOrProposal(devAgent, 'promote', { environment: 'prod' })).toThrow('limited to environment dev');
    expect(() => authorizeOrProposal(devAgent, 'flag.archive')).toThrow('acts in every environment');
  });
});
