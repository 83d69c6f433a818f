import type { EnvironmentName } from '@flagops/core';
import { ForbiddenError } from '../errors/kinds.js';
import type { Principal, PrincipalKind } from './principal.js';

/** Every control-plane operation a credential may or may not perform. */
export const PERMISSIONS = [
  'read',
  'project.create',
  'project.update',
  'project.delete',
  'flag.create',
  'flag.update',
  'flag.archive',
  'flag.delete',
  'config.update',
  'segment.update',
  'kill',
  'clear_kill',
  'promote',
  'proposal.decide',
  'keys.manage',
  'triggers.manage',
  'webhooks.manage',
  'audit.read',
  'stats.read',
  'replication',
  'git',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Granted, refused, or granted except for some destination environments. */
export type Grant = boolean | { exceptInto: readonly EnvironmentName[]; why: string };

const ALL = true;
const NONE = false;

/**
 * The one statement of who may do what (docs/credentials.md has it as a table). Everything is scoped to the principal's own
 * organisation before this table is consulted: another organisation's resources are simply not found.
 */
export const PERMISSION_TABLE: Readonly<Record<PrincipalKind, Readonly<Record<Permission, Grant>>>> = {
  admin: {
    read: ALL,
    'project.create': ALL,
    'project.update': ALL,
    'project.delete': ALL,
    'flag.create': ALL,
    'flag.update': ALL,
    'flag.archive': ALL,
    'flag.delete': ALL,
    'config.update': ALL,
    'segment.update': ALL,
    kill: ALL,
    clear_kill: ALL,
    promote: ALL,
    'proposal.decide': ALL,
    'keys.manage': ALL,
    'triggers.manage': ALL,
    'webhooks.manage': ALL,
    'audit.read': ALL,
    'stats.read': ALL,
    replication: ALL,
    git: ALL,
  },
  session: {
    read: ALL,
    'project.create': ALL,
    'project.update': ALL,
    'project.delete': ALL,
    'flag.create': ALL,
    'flag.update': ALL,
    'flag.archive': ALL,
    'flag.delete': ALL,
    'config.update': ALL,
    'segment.update': ALL,
    kill: ALL,
    clear_kill: ALL,
    promote: ALL,
    'proposal.decide': ALL,
    'keys.manage': NONE,
    'triggers.manage': ALL,
    'webhooks.manage': ALL,
    'audit.read': ALL,
    'stats.read': ALL,
    replication: NONE,
    git: NONE,
  },
  agent: {
    read: ALL,
    'project.create': NONE,
    'project.update': NONE,
    'project.delete': NONE,
    'flag.create': ALL,
    'flag.update': ALL,
    'flag.archive': NONE,
    'flag.delete': NONE,
    'config.update': ALL,
    'segment.update': ALL,
    kill: ALL,
    clear_kill: ALL,
    promote: { exceptInto: ['prod'], why: 'promoting into prod is a deploy' },
    'proposal.decide': NONE,
    'keys.manage': NONE,
    'triggers.manage': NONE,
    'webhooks.manage': NONE,
    'audit.read': ALL,
    'stats.read': ALL,
    replication: NONE,
    git: ALL,
  },
  sdk: {
    read: NONE,
    'project.create': NONE,
    'project.update': NONE,
    'project.delete': NONE,
    'flag.create': NONE,
    'flag.update': NONE,
    'flag.archive': NONE,
    'flag.delete': NONE,
    'config.update': NONE,
    'segment.update': NONE,
    kill: NONE,
    clear_kill: NONE,
    promote: NONE,
    'proposal.decide': NONE,
    'keys.manage': NONE,
    'triggers.manage': NONE,
    'webhooks.manage': NONE,
    'audit.read': NONE,
    'stats.read': NONE,
    replication: NONE,
    git: NONE,
  },
};

/** Words for error messages: "an agent key may not <label>". */
const LABEL: Readonly<Record<Permission, string>> = {
  read: 'read projects and flags',
  'project.create': 'create projects',
  'project.update': "change a project's settings (requireApproval)",
  'project.delete': 'delete projects or their files',
  'flag.create': 'create flags',
  'flag.update': 'change flag metadata',
  'flag.archive': 'archive flags',
  'flag.delete': 'delete flags or their configs',
  'config.update': 'update environment configs',
  'segment.update': 'change segments',
  kill: 'kill flags',
  clear_kill: 'clear kills',
  promote: 'promote configs',
  'proposal.decide': 'approve or reject proposals',
  'keys.manage': 'manage keys',
  'triggers.manage': 'create or delete triggers',
  'webhooks.manage': 'manage webhooks',
  'audit.read': 'read the audit trail',
  'stats.read': 'read evaluation stats',
  replication: 'follow the control plane as an evaluation replica (it reads every project and verifies sdk keys)',
  git: 'clone, fetch or push the flags repository over git (a push is then checked file by file)',
};

const CREDENTIAL_NAME: Readonly<Record<PrincipalKind, string>> = {
  admin: 'an admin key',
  agent: 'an agent key',
  session: 'a session',
  sdk: 'an sdk key',
};

export interface PermissionContext {
  /** The environment the operation writes to; required for `promote` (its destination). */
  environment?: EnvironmentName;
}

/** Whether the principal may perform `permission`; see `authorize` for the throwing form. */
export function can(principal: Pick<Principal, 'kind'>, permission: Permission, context: PermissionContext = {}): boolean {
  return refusal(principal.kind, permission, context) === null;
}

/** Throws ForbiddenError, saying what is missing, unless the principal may perform `permission`. */
export function authorize(principal: Pick<Principal, 'kind'>, permission: Permission, context: PermissionContext = {}): void {
  const reason = refusal(principal.kind, permission, context);
  if (reason !== null) throw new ForbiddenError(reason);
}

function refusal(kind: PrincipalKind, permission: Permission, context: PermissionContext): string | null {
  const grant = PERMISSION_TABLE[kind]?.[permission];
  if (grant === true) return null;
  if (grant === undefined || grant === false) {
    return `${CREDENTIAL_NAME[kind] ?? 'this credential'} may not ${LABEL[permission] ?? permission}; it needs ${holders(permission)}`;
  }
  // A partial grant depends on the destination; without one the check cannot pass (fail closed).
  if (context.environment === undefined) throw new TypeError(`authorize(${permission}) needs the destination environment`);
  if (!grant.exceptInto.includes(context.environment)) return null;
  return `${CREDENTIAL_NAME[kind]} may not ${LABEL[permission]} into ${context.environment} (${grant.why}); it needs ${holders(permission, context.environment)}`;
}

/** "an admin key or a session": who holds the permission outright, read from the table. */
function holders(permission: Permission, environment?: EnvironmentName): string {
  const names = (Object.keys(PERMISSION_TABLE) as PrincipalKind[])
    .filter((kind) => {
      const grant = PERMISSION_TABLE[kind][permission];
      return grant === true || (grant !== false && environment !== undefined && !grant.exceptInto.includes(environment));
    })
    .map((kind) => CREDENTIAL_NAME[kind]);
  return names.length === 0 ? 'a credential that nobody holds' : names.join(' or ');
}
