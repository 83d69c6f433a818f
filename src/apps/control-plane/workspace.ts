import type { Actor, ProjectState, RepositoryState } from '@flagops/core';
import { authorize, type Permission, type PermissionContext } from '../../foundations/auth/permissions.js';
import type { Principal } from '../../foundations/auth/principal.js';
import { limitedToProjects, projectInScope, type Scope } from '../../foundations/auth/scope.js';
import type { FlagRepository, ServedState } from '../../foundations/storage/index.js';
import type { ControlPlaneDeps } from './deps.js';

/**
 * What a service works in: the caller's organisation and nothing else. The repository is the principal's
 * own organisation's, so another organisation's resource can never be found (404). A credential limited to
 * projects reads, through `readServed`, a state that holds only those projects, so every other project and
 * everything in it is not found to it either, and lists leave them out.
 */
export interface Workspace {
  org: string;
  principal: Principal;
  actor: Actor;
  repo: FlagRepository;
  deps: ControlPlaneDeps;
  now(): Date;
  /**
   * Resolves once the evaluation server serves main's head, so a writer reads its change back at once; rejects
   * with the storage fault (503) that keeps it from serving it.
   */
  served(): Promise<void>;
  /** What `commit` (default main's head) serves, as far as the principal may see: `repo.readServed` within its scope. */
  readServed(commit?: string | null): Promise<ServedState>;
  /** The permission table again, for a handler that learns the environment from the resource (a trigger, a proposal). */
  authorize(permission: Permission, context: PermissionContext): void;
}

export async function openWorkspace(deps: ControlPlaneDeps, principal: Principal): Promise<Workspace> {
  const repo = await deps.repos.get(principal.org);
  const clock = deps.clock ?? (() => new Date());
  const scope = limitedToProjects(principal.scope) ? principal.scope : undefined;
  return {
    org: principal.org,
    principal,
    actor: actorOf(principal),
    repo,
    deps,
    now: clock,
    served: () => deps.holder.serveHead(principal.org),
    readServed:
      scope === undefined ? (commit) => repo.readServed(commit) : async (commit) => withinScope(await repo.readServed(commit), scope),
    authorize: (permission, context) => authorize(principal, permission, context),
  };
}

// Served states are immutable and shared per commit: one filtered copy per state and set of projects serves every
// request of every credential limited to that set, so what is cached per served state (flag views, lookups) is
// shared by all of them rather than made again per key.
const filtered = new WeakMap<ServedState, Map<string, ServedState>>();
const scopeKeys = new WeakMap<Scope, string>();

/** The projects a scope covers, as one string: equal for equal sets, however the scopes were made. */
function projectsKey(scope: Scope): string {
  let key = scopeKeys.get(scope);
  if (key === undefined) {
    key = JSON.stringify([[...(scope.projectIds ?? [])].sort(), [...(scope.projectSlugs ?? [])].sort()]);
    scopeKeys.set(scope, key);
  }
  return key;
}

/** The served state with only the projects `scope` covers (their issues, held files and kills too). */
function withinScope(served: ServedState, scope: Scope): ServedState {
  let byScope = filtered.get(served);
  if (!byScope) {
    byScope = new Map();
    filtered.set(served, byScope);
  }
  const key = projectsKey(scope);
  let view = byScope.get(key);
  if (!view) {
    const projects = new Map<string, ProjectState>();
    for (const [slug, project] of served.state.projects) if (projectInScope(scope, project.project)) projects.set(slug, project);
    const state: RepositoryState = { ...served.state, projects };
    const keep = <V>(map: ReadonlyMap<string, V>, slugOf: (key: string) => string) =>
      new Map([...map].filter(([key]) => projects.has(slugOf(key))));
    view = {
      ...served,
      state,
      issues: served.issues.filter((issue) => {
        const slug = /^projects\/([^/]+)\//.exec(issue.file ?? '')?.[1];
        return slug !== undefined && projects.has(slug);
      }),
      heldProjects: keep(served.heldProjects, (slug) => slug),
      heldFlags: keep(served.heldFlags, (key) => key.split('/')[0]),
      killFiles: keep(served.killFiles, (slug) => slug),
    };
    byScope.set(key, view);
  }
  return view;
}

/** The commit author and audit actor of a principal: keys are attributed by their prefix. */
export function actorOf(principal: Principal): Actor {
  // A session's prefix is its person's username (src/apps/dashboard): their commits carry it, so the git log tells
  // two people of the same name apart.
  if (principal.kind === 'session') {
    const actor: Actor = { type: 'session', name: principal.name, email: sessionEmail(principal.prefix) };
    if (principal.roleText !== undefined) actor.role = principal.roleText;
    return actor;
  }
  if (principal.kind === 'sdk') throw new TypeError('an sdk key never acts on the control plane');
  return { type: principal.kind, name: principal.name, keyPrefix: principal.prefix };
}

/** A username that is an email address is used as is; any other gets a domain that says where it comes from. */
function sessionEmail(username: string): string {
  if (username === '') return 'session@users.flagops';
  return username.includes('@') ? username : `${username}@users.flagops`;
}
