import type { EnvironmentName } from '@flagops/core';
import { ForbiddenError } from '../errors/kinds.js';
import type { Principal } from './principal.js';
import type { RoleName } from './roles.js';
import { describeScope, environmentInScope, limitedToProjects, type Scope } from './scope.js';

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
  'users.manage',
  'triggers.manage',
  'webhooks.manage',
  'audit.read',
  'stats.read',
  'replication',
  'git',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/**
 * Granted; refused; granted only as a change proposal (`PROPOSAL`: refused, unless the project makes the
 * change wait for approval of the caller's actor type); or granted except into some destination environments,
 * where it is granted only as a proposal. `false` is refused even where the change could wait: a proposal is a
 * change too, and an approval only decides it.
 */
export type Grant = boolean | 'proposal' | { exceptInto: readonly EnvironmentName[]; why: string };

const ALL = true;
const NONE = false;
const PROPOSAL = 'proposal';

/**
 * Who holds permissions: a key of one of the three kinds, or a dashboard session of one of the three roles (a
 * session without a role, what every session was before roles, is an admin session: `session`).
 */
export const HOLDERS = ['admin', 'agent', 'session', 'editor session', 'viewer session', 'sdk'] as const;
export type Holder = (typeof HOLDERS)[number];

/** What the table needs of a principal: its kind, a session's role, and its limits (scope, a key's expiry). */
export type Grantee = Pick<Principal, 'kind'> & { role?: RoleName; scope?: Scope; expiresAt?: string };

/** The row of the table a principal is held to. */
export function holderOf(principal: Grantee): Holder {
  if (principal.kind !== 'session' || principal.role === undefined || principal.role === 'admin') return principal.kind;
  return principal.role === 'editor' ? 'editor session' : 'viewer session';
}

/**
 * The one statement of who may do what (docs/credentials.md has it as a table). Everything is scoped to the principal's own
 * organisation before this table is consulted: another organisation's resources are simply not found. A
 * credential limited to projects or environments is then held to its limits (see `scopeRefusal`).
 */
export const PERMISSION_TABLE: Readonly<Record<Holder, Readonly<Record<Permission, Grant>>>> = {
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
    'users.manage': ALL,
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
    'users.manage': NONE,
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
    'flag.archive': PROPOSAL,
    'flag.delete': NONE,
    'config.update': ALL,
    'segment.update': ALL,
    kill: ALL,
    clear_kill: ALL,
    promote: { exceptInto: ['prod'], why: 'promoting into prod is a deploy' },
    'proposal.decide': NONE,
    'keys.manage': NONE,
    'users.manage': NONE,
    'triggers.manage': NONE,
    'webhooks.manage': NONE,
    'audit.read': ALL,
    'stats.read': ALL,
    replication: NONE,
    git: ALL,
  },
  // An editor may do what an agent key may (docs/credentials.md, roles), through the dashboard and the API; git is for keys.
  'editor session': {
    read: ALL,
    'project.create': NONE,
    'project.update': NONE,
    'project.delete': NONE,
    'flag.create': ALL,
    'flag.update': ALL,
    'flag.archive': PROPOSAL,
    'flag.delete': NONE,
    'config.update': ALL,
    'segment.update': ALL,
    kill: ALL,
    clear_kill: ALL,
    promote: { exceptInto: ['prod'], why: 'promoting into prod is a deploy' },
    'proposal.decide': NONE,
    'keys.manage': NONE,
    'users.manage': NONE,
    'triggers.manage': NONE,
    'webhooks.manage': NONE,
    'audit.read': ALL,
    'stats.read': ALL,
    replication: NONE,
    git: NONE,
  },
  'viewer session': {
    read: ALL,
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
    'users.manage': NONE,
    'triggers.manage': NONE,
    'webhooks.manage': NONE,
    'audit.read': ALL,
    'stats.read': ALL,
    replication: NONE,
    git: NONE,
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
    'users.manage': NONE,
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
  'project.update': "change a project's settings (name, requireApproval, budgets)",
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
  'users.manage': 'manage dashboard users',
  'triggers.manage': 'create or delete triggers',
  'webhooks.manage': 'manage webhooks',
  'audit.read': 'read the audit trail',
  'stats.read': 'read evaluation stats',
  replication: 'follow the control plane as an evaluation replica (it reads every project and verifies sdk keys)',
  git: 'clone, fetch or push the flags repository over git (a push is then checked file by file)',
};

const CREDENTIAL_NAME: Readonly<Record<Holder, string>> = {
  admin: 'an admin key',
  agent: 'an agent key',
  session: 'an admin session',
  'editor session': 'an editor session',
  'viewer session': 'a viewer session',
  sdk: 'an sdk key',
};

/**
 * Of organisation-wide things: a credential limited to projects or environments, or a key that expires, may not
 * use them, since what they make or show reaches past its limits (a new project, every project's webhook
 * events, users who would be admins and outlast the key, a replica's copy of every project).
 */
const WHOLE_ORGANISATION: ReadonlySet<Permission> = new Set(['project.create', 'webhooks.manage', 'users.manage', 'replication']);

/** What acts in one environment, the context's: a credential limited to environments holds it only in those. */
const IN_ONE_ENVIRONMENT: ReadonlySet<Permission> = new Set([
  'config.update',
  'kill',
  'clear_kill',
  'promote',
  'triggers.manage',
  'proposal.decide',
]);

/**
 * Changes that act in every environment at once (a project's settings, a flag's metadata and default value, its
 * archiving, segments, deleting files): refused to a credential limited to environments. Creating a flag is
 * not among them: a new flag starts off everywhere.
 */
const IN_EVERY_ENVIRONMENT: ReadonlySet<Permission> = new Set([
  'project.update',
  'project.delete',
  'flag.update',
  'flag.archive',
  'flag.delete',
  'segment.update',
]);

export interface PermissionContext {
  /** The environment the operation writes to; required for `promote` (its destination). */
  environment?: EnvironmentName;
  /**
   * The environment is not known yet (a route without `:env` whose resource names it: a trigger, a proposal):
   * the environment limits are checked by the handler once it knows, with `authorize` again.
   */
  environmentLater?: boolean;
}

/**
 * What a principal may do, for a page that offers only the controls it may use: the permissions granted in at
 * least one environment, and the environments it may promote into.
 */
export function grantsOf(principal: Grantee): { permissions: Permission[]; promoteInto: EnvironmentName[] } {
  const environments: EnvironmentName[] = ['dev', 'staging', 'prod'];
  const permissions = PERMISSIONS.filter((permission) =>
    environments.some((environment) => refusal(principal, permission, { environment }) === null),
  );
  return { permissions, promoteInto: environments.filter((environment) => can(principal, 'promote', { environment })) };
}

/** Whether the principal may perform `permission`; see `authorize` for the throwing form. */
export function can(principal: Grantee, permission: Permission, context: PermissionContext = {}): boolean {
  return refusal(principal, permission, context) === null;
}

/** Throws ForbiddenError, saying what is missing, unless the principal may perform `permission`. */
export function authorize(principal: Grantee, permission: Permission, context: PermissionContext = {}): void {
  const reason = refusal(principal, permission, context);
  if (reason !== null) throw new ForbiddenError(reason);
}

/**
 * For a change that may wait as a proposal (a promotion, an archive): undefined when the principal may make it
 * at once; the ForbiddenError to refuse it with unless the project makes it a proposal, when the table grants
 * it only as one. Throws ForbiddenError when the table refuses it outright (a viewer proposes nothing) or the
 * principal's limits refuse it: a proposal never waives a limit.
 */
export function authorizeOrProposal(
  principal: Grantee,
  permission: Permission,
  context: PermissionContext = {},
): ForbiddenError | undefined {
  const holder = holderOf(principal);
  const reason = tableRefusal(holder, permission, context);
  if (reason !== null && !proposalOnly(PERMISSION_TABLE[holder]?.[permission], context)) throw new ForbiddenError(reason);
  const limit = scopeRefusal(principal, permission, context);
  if (limit !== null) throw new ForbiddenError(limit);
  return reason === null ? undefined : new ForbiddenError(reason);
}

/** Whether a grant makes the permission a proposal's in this context (not refused outright, not granted). */
function proposalOnly(grant: Grant | undefined, context: PermissionContext): boolean {
  if (grant === PROPOSAL) return true;
  if (grant === undefined || typeof grant === 'boolean') return false;
  return context.environment !== undefined && grant.exceptInto.includes(context.environment);
}

function refusal(principal: Grantee, permission: Permission, context: PermissionContext): string | null {
  return tableRefusal(holderOf(principal), permission, context) ?? scopeRefusal(principal, permission, context);
}

/** The limits of a scoped or expiring credential, after the table has granted the permission itself. */
function scopeRefusal(principal: Grantee, permission: Permission, context: PermissionContext): string | null {
  const { scope, expiresAt } = principal;
  if (scope === undefined && expiresAt === undefined) return null;
  const scoped = scope !== undefined && (limitedToProjects(scope) || scope.environments !== undefined);
  // Words only for a refusal: the granted path, every request of a limited key, builds no string.
  const who = () => `${CREDENTIAL_NAME[holderOf(principal)]} limited to ${describeScope(scope)}`;
  if (scoped && WHOLE_ORGANISATION.has(permission))
    return `${who()} may not ${LABEL[permission]}: that reaches the whole organisation; it needs a credential without limits`;
  // What these make outlasts the key (a user, a webhook, a project) or serves past its end (a replica).
  if (expiresAt !== undefined && WHOLE_ORGANISATION.has(permission))
    return `${CREDENTIAL_NAME[holderOf(principal)]} expiring at ${expiresAt} may not ${LABEL[permission]}: that reaches past its expiry; it needs a credential without limits`;
  if (scope?.environments === undefined) return null;
  if (IN_EVERY_ENVIRONMENT.has(permission))
    return `${who()} may not ${LABEL[permission]}: that acts in every environment; it needs a credential not limited to environments`;
  if (!IN_ONE_ENVIRONMENT.has(permission)) return null;
  if (context.environment === undefined) {
    if (context.environmentLater) return null;
    throw new TypeError(`authorize(${permission}) needs the environment for a credential limited to environments`);
  }
  if (environmentInScope(scope, context.environment)) return null;
  return `${who()} may not ${LABEL[permission]} in ${context.environment}`;
}

function tableRefusal(kind: Holder, permission: Permission, context: PermissionContext): string | null {
  const grant = PERMISSION_TABLE[kind]?.[permission];
  if (grant === true) return null;
  if (grant === undefined || typeof grant !== 'object') {
    return `${CREDENTIAL_NAME[kind] ?? 'this credential'} may not ${LABEL[permission] ?? permission}; it needs ${holders(permission)}`;
  }
  // A partial grant depends on the destination; without one the check cannot pass (fail closed).
  if (context.environment === undefined && context.environmentLater) return null;
  if (context.environment === undefined) throw new TypeError(`authorize(${permission}) needs the destination environment`);
  if (!grant.exceptInto.includes(context.environment)) return null;
  return `${CREDENTIAL_NAME[kind]} may not ${LABEL[permission]} into ${context.environment} (${grant.why}); it needs ${holders(permission, context.environment)}`;
}

/** "an admin key or a session": who holds the permission outright, read from the table. */
function holders(permission: Permission, environment?: EnvironmentName): string {
  const names = HOLDERS.filter((kind) => {
    const grant = PERMISSION_TABLE[kind][permission];
    return grant === true || (typeof grant === 'object' && environment !== undefined && !grant.exceptInto.includes(environment));
  }).map((kind) => CREDENTIAL_NAME[kind]);
  if (names.length === 0) return 'a credential that nobody holds';
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}
