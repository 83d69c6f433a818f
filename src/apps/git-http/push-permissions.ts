import {
  type ApprovalActorType,
  type AuditAction,
  canonicalJson,
  ENVIRONMENTS,
  type EnvironmentName,
  type FlagFile,
  type Pusher,
  type RequireApproval,
} from '@flagops/core';
import { type DerivedChange, describeChanges } from '../../features/audit/diff-entries.js';
import { authorize, type Permission } from '../../foundations/auth/permissions.js';
import { classifyPath, layout } from '../../foundations/repository/layout.js';
import { servesAsCreated } from '../../foundations/repository/new-flag.js';
import { parseRepositoryFile } from '../../foundations/repository/parse-file.js';
import type { ChangedPath } from '../../foundations/storage/index.js';
import { readBlobs } from './pushed-objects.js';

/**
 * A push is held to the permission table the API uses (src/foundations/auth/permissions.ts), for the key that pushes
 * it: what it does is read from its diff (old head → new head) by the audit trail's own rules, each change is
 * the operation the API would perform for it, and each operation the key may not perform is one refusal.
 * Deleting files is an admin's act: the API never deletes a flag or a project, so a push that does is held to
 * `flag.delete` (a flag file or a config) or `project.delete` (anything else of a project: project.yaml,
 * kills.yaml, other files). A changed project.yaml is what PATCH /projects/:id changes (`project.update`), whatever
 * in it changed; an edited kill entry is a kill made again (`kill`).
 */

const ACTION_PERMISSION: Readonly<Partial<Record<AuditAction, Permission>>> = {
  project_create: 'project.create',
  project_update: 'project.update',
  flag_create: 'flag.create',
  flag_update: 'flag.update',
  flag_archive: 'flag.archive',
  config_update: 'config.update',
  segment_update: 'segment.update',
  kill: 'kill',
  clear_kill: 'clear_kill',
  // Any other edit of a project's files is the kind of change a config update is.
  change: 'config.update',
};

const SEGMENT_DELETE = { action: 'segment_delete', flagKey: null, environment: null } as const;

/** A limited key's reach, as a push is held to it: project slugs and environments (absent: no limit). */
export interface PushLimits {
  projects?: string[];
  environments?: EnvironmentName[];
  /** When the key expires: what would outlast it (a new project) is refused, as through the API. */
  expiresAt?: string;
}

export interface PushScope {
  pusher: Pusher;
  /** The pushing key's limits: a file outside them is refused, named. */
  limits?: PushLimits;
  /** FLAGOPS_PLAN_PROJECT_LIMIT. */
  projectLimit?: number;
  /** Projects on main after the push (every `projects/<slug>/project.yaml`). */
  projectsAfter: number;
  /** The project.yaml files after the push: their requireApproval says which config changes wait for approval. */
  projectFiles?: ReadonlyArray<{ path: string; text: string }>;
}

/**
 * The blobs `changes` name (old and new; of deleted files, flag files only, whose archivedAt a deletion is held
 * to), read in one go: a push checks each of its commits with them.
 */
export function blobsOfChanges(changes: readonly ChangedPath[]): Promise<Map<string, string>> {
  return readBlobs(
    changes
      .flatMap((c) => (c.change !== 'deleted' ? [c.oldOid, c.newOid] : classifyPath(c.path).kind === 'flag' ? [c.oldOid] : []))
      .filter((oid): oid is string => oid !== undefined),
  );
}

/** `blobs`: the contents of the blobs `changes` name (blobsOfChanges), when read already. */
export async function checkPushPermissions(
  changes: readonly ChangedPath[],
  scope: PushScope,
  blobs?: ReadonlyMap<string, string>,
): Promise<string[]> {
  const problems: string[] = [];
  const environments = scope.limits?.environments;
  const expiresAt = scope.limits?.expiresAt;
  const grantee = {
    kind: scope.pusher.type,
    ...(environments ? { scope: { environments: new Set(environments) } } : {}),
    ...(expiresAt ? { expiresAt } : {}),
  };
  /** `what`: what the change is, when the permission's words alone do not say it. */
  const refuse = (path: string, permission: Permission, environment?: EnvironmentName | null, what?: string) => {
    const where = what === undefined ? path : `${path}: ${what}`;
    try {
      authorize(grantee, permission, environment ? { environment } : {});
    } catch (err) {
      // A change of no one environment, by a key limited to environments: not its to make.
      if (err instanceof TypeError) problems.push(`${where}: ${outsideWords(scope.limits)}`);
      else problems.push(`${where}: ${(err as Error).message}`);
    }
  };
  problems.push(...outsideLimits(changes, scope.limits));

  // An invalid project.yaml has no policy to read: its project is held back, and the push check refuses every
  // change to it but kills (push-held-back.ts) unless the push fixes the file, which it then reads valid here.
  const policies = new Map<string, RequireApproval | undefined>();
  for (const file of scope.projectFiles ?? []) {
    const where = classifyPath(file.path);
    const { file: parsed } = parseRepositoryFile(file.path, file.text);
    if (where.kind === 'project' && parsed?.kind === 'project') policies.set(where.project, parsed.value.requireApproval);
  }

  const contents = blobs ?? (await blobsOfChanges(changes));
  for (const { path, permission, oldOid } of deletions(changes)) {
    refuse(path, permission, environmentOf(path));
    const where = classifyPath(path);
    if (where.kind === 'segment') {
      const waits = waitsForApproval(
        { ...SEGMENT_DELETE, projectSlug: where.project, segmentKey: where.segment },
        policies.get(where.project),
        scope.pusher.type,
      );
      if (waits) problems.push(`${path}: ${waits}`);
    } else if (where.kind === 'flag') {
      const waits = liveFlagDeletionWaits(where.project, contents.get(oldOid ?? ''), policies.get(where.project), scope.pusher.type);
      if (waits) problems.push(`${path}: ${waits}`);
    }
  }

  const kept = changes.filter((c) => c.change !== 'deleted');
  // A changed project.yaml is held below, by what in it changed.
  const projectFilesChanged = kept.filter((c) => c.change === 'modified' && classifyPath(c.path).kind === 'project');
  const described = await describeChanges(
    kept.filter((c) => !projectFilesChanged.includes(c)),
    { readBlob: async (oid) => contents.get(oid) ?? '' },
  );
  const created: string[] = [];
  for (const change of described) {
    // A `change` in one environment is of its kills.yaml (an entry edited, or the file unreadable): a kill made again.
    const permission = change.action === 'change' && change.environment !== null ? 'kill' : ACTION_PERMISSION[change.action];
    if (permission === undefined || change.projectSlug === null) continue;
    const path =
      change.segmentKey === undefined
        ? pathOf(change.projectSlug, change.flagKey, change.environment, change.action)
        : layout.segmentFile(change.projectSlug, change.segmentKey);
    if (change.action === 'project_create') created.push(path);
    refuse(path, permission, change.environment);
    const waits = waitsForApproval(change, policies.get(change.projectSlug), scope.pusher.type);
    if (waits) problems.push(`${path}: ${waits}`);
  }
  // Created archived, taken out of the archive, or serving another defaultValue while archived: each changes what
  // every environment serves, as an archive does; the API has none of them, so each is held to what an archive is.
  for (const { path, projectSlug, flagKey } of archivesBesideTheApi(kept, contents)) {
    refuse(path, 'flag.archive');
    const waits = waitsForApproval(
      { action: 'flag_archive', projectSlug, flagKey, environment: null },
      policies.get(projectSlug),
      scope.pusher.type,
    );
    if (waits) problems.push(`${path}: ${waits}`);
  }
  for (const { path, environment } of newConfigsServingSomeone(kept, contents)) {
    const slug = path.split('/')[1];
    // A key limited to environments creates a flag through the API off in the others; turning it on there is not its to do.
    if (environments && !environments.includes(environment))
      problems.push(`${path}: ${outsideWords(scope.limits)}; a new flag it adds stays off there, with no schedule`);
    else if (policies.get(slug)?.[environment]?.includes(scope.pusher.type as ApprovalActorType))
      problems.push(`${path}: ${approvalWords(slug, [environment], scope.pusher.type)}`);
  }

  // project.yaml holds the project's name and settings, which only PATCH /projects/:id changes; its id no push
  // may change (push-check.ts), so a change of the id alone is not a setting.
  for (const change of projectFilesChanged) {
    const changed = projectFileChanges(change.path, contents.get(change.oldOid!), contents.get(change.newOid!));
    if (changed !== null) refuse(change.path, 'project.update', null, `changes ${changed}`);
  }

  const limit = scope.projectLimit;
  if (limit !== undefined && created.length > 0 && scope.projectsAfter > limit) {
    for (const path of created)
      problems.push(`${path}: the plan allows at most ${limit} projects; this push would make ${scope.projectsAfter}`);
  }
  return problems;
}

/**
 * The files of a push outside the pushing key's projects, one refusal each naming the file: a limited key
 * changes only files under `projects/<slug>/` of its own projects (git cannot hide the others from a clone,
 * but it can refuse changes to them).
 */
function outsideLimits(changes: readonly ChangedPath[], limits: PushLimits | undefined): string[] {
  const projects = limits?.projects;
  if (projects === undefined) return [];
  const allowed = new Set(projects);
  return changes
    .filter((c) => {
      const match = /^projects\/([^/]+)\//.exec(c.path);
      return match === null || !allowed.has(match[1]);
    })
    .map((c) => `${c.path}: ${outsideWords(limits)}`);
}

function outsideWords(limits: PushLimits | undefined): string {
  const parts: string[] = [];
  if (limits?.projects) parts.push(`projects ${limits.projects.join(', ') || '(none that exist)'}`);
  if (limits?.environments) parts.push(`environments ${limits.environments.join(', ')}`);
  return `outside what this key may change (it is limited to ${parts.join(' and ')})`;
}

/** The environment a config or kills file belongs to, or null. */
function environmentOf(path: string): EnvironmentName | null {
  const where = classifyPath(path);
  return where.kind === 'config' || where.kind === 'kills' ? where.environment : null;
}

/**
 * Why a change read from a push would wait for approval were it made through the API, or null: a config update
 * in an environment whose policy lists the pusher's actor type, or a segment change (added, modified or
 * deleted) when any environment's does, since a segment acts in every environment. A push may not skip the
 * review the API would give the same change.
 */
function waitsForApproval(change: DerivedChange, policy: RequireApproval | undefined, actorType: string): string | null {
  if (!policy || change.projectSlug === null) return null;
  const listing = ENVIRONMENTS.filter((env) => policy[env]?.includes(actorType as ApprovalActorType));
  if (change.action === 'config_update' && change.environment && listing.includes(change.environment))
    return approvalWords(change.projectSlug, [change.environment], actorType);
  if (change.segmentKey !== undefined && listing.length > 0)
    return approvalWords(change.projectSlug, listing, actorType, ' (a segment acts in every environment)');
  if (change.action === 'flag_archive' && listing.length > 0)
    return approvalWords(change.projectSlug, listing, actorType, ' (an archive acts in every environment)');
  return null;
}

/**
 * Why deleting a flag waits for approval, or null. A flag that is not archived serves its configs in every
 * environment, and deleting it changes what each serves, as its archive would; the API has no deletion, only the
 * archive, which such a policy keeps as a proposal. An archived flag (its archive went through that review) may go.
 */
function liveFlagDeletionWaits(
  slug: string,
  before: string | undefined,
  policy: RequireApproval | undefined,
  actorType: string,
): string | null {
  const listing = ENVIRONMENTS.filter((env) => policy?.[env]?.includes(actorType as ApprovalActorType));
  if (listing.length === 0) return null;
  const { file } = parseRepositoryFile(layout.flagFile(slug, 'x'), before ?? '');
  if (file?.kind === 'flag' && typeof file.value.archivedAt === 'string') return null;
  const which = listing.length === 1 ? `${listing[0]} requires` : `${listing.join(' and ')} require`;
  return `${which} approval of ${actorType} changes in project ${slug}, and the flag is not archived (deleting it changes what every environment serves); archive it first through the API or MCP, where the archive waits for approval, then delete it`;
}

function approvalWords(slug: string, environments: readonly EnvironmentName[], actorType: string, why = ''): string {
  const which = environments.length === 1 ? `${environments[0]} requires` : `${environments.join(' and ')} require`;
  return `${which} approval of ${actorType} changes in project ${slug}${why}; propose it through the API or MCP instead, where it waits for approval`;
}

/**
 * The flag files a push adds archived, takes out of the archive (archivedAt set, then null), or whose defaultValue
 * it changes while archived. Files that do not parse are the validity check's to refuse.
 */
function archivesBesideTheApi(
  changes: readonly ChangedPath[],
  blobs: ReadonlyMap<string, string>,
): Array<{ path: string; projectSlug: string; flagKey: string }> {
  const flagOf = (path: string, oid: string | undefined) => {
    const { file } = parseRepositoryFile(path, oid === undefined ? '' : (blobs.get(oid) ?? ''));
    return file?.kind === 'flag' ? file.value : undefined;
  };
  const found: Array<{ path: string; projectSlug: string; flagKey: string }> = [];
  for (const c of changes) {
    const where = classifyPath(c.path);
    if (where.kind !== 'flag') continue;
    const after = flagOf(c.path, c.newOid);
    const before = c.change === 'modified' ? flagOf(c.path, c.oldOid) : undefined;
    const createdArchived = c.change === 'added' && typeof after?.archivedAt === 'string';
    const unarchived = after?.archivedAt === null && typeof before?.archivedAt === 'string';
    // An archived flag serves its defaultValue everywhere: changing it changes what every environment serves.
    const archivedServesOther =
      typeof after?.archivedAt === 'string' &&
      typeof before?.archivedAt === 'string' &&
      canonicalJson(after.defaultValue ?? null) !== canonicalJson(before.defaultValue ?? null);
    if (createdArchived || unarchived || archivedServesOther) found.push({ path: c.path, projectSlug: where.project, flagKey: where.flag });
  }
  return found;
}

/**
 * The configs a push adds together with their flag (a new flag) that serve anyone anything but the off value
 * the API gives a new flag (false, or the flag's defaultValue): enabled, with a rollout above 0 % or a rule
 * serving something else, with another off value (a boolean flag whose valueOff is true serves true to everyone),
 * or with a schedule, whose steps change the config later. Through the API a new flag starts off at 0 % everywhere with no schedule, and turning it on in a
 * protected environment (or scheduling it on) is a config update; a push that creates it on may not skip that
 * review. Files that do not parse are the validity check's to refuse.
 */
function newConfigsServingSomeone(
  changes: readonly ChangedPath[],
  blobs: ReadonlyMap<string, string>,
): Array<{ path: string; environment: EnvironmentName }> {
  const newFlags = new Map<string, FlagFile | undefined>();
  for (const c of changes) {
    const where = classifyPath(c.path);
    if (where.kind !== 'flag' || c.change !== 'added') continue;
    const { file } = parseRepositoryFile(c.path, blobs.get(c.newOid!) ?? '');
    newFlags.set(`${where.project}/${where.flag}`, file?.kind === 'flag' ? file.value : undefined);
  }
  const found: Array<{ path: string; environment: EnvironmentName }> = [];
  for (const c of changes) {
    const where = classifyPath(c.path);
    if (where.kind !== 'config' || c.change !== 'added') continue;
    const id = `${where.project}/${where.flag}`;
    if (!newFlags.has(id)) continue;
    const { file } = parseRepositoryFile(c.path, blobs.get(c.newOid!) ?? '');
    // A flag file that does not parse is the validity check's to refuse; its configs are judged as booleans.
    if (file?.kind === 'config' && !servesAsCreated(file.value, newFlags.get(id) ?? { kind: 'boolean' }))
      found.push({ path: c.path, environment: where.environment });
  }
  return found;
}

/**
 * What a change of a project.yaml changes besides its id, in words ("name and budgets"), or null when only the
 * id changed. A version that does not parse is compared as a whole; one that differs only in its comments or
 * layout changes "its text".
 */
function projectFileChanges(path: string, before: string | undefined, after: string | undefined): string | null {
  const projectOf = (text: string | undefined) => {
    const { file } = parseRepositoryFile(path, text ?? '');
    return file?.kind === 'project' ? (file.value as unknown as Record<string, unknown>) : undefined;
  };
  const old = projectOf(before);
  const now = projectOf(after);
  if (old === undefined || now === undefined) return 'its content';
  const fields = [...new Set([...Object.keys(old), ...Object.keys(now)])].filter(
    (field) => field !== 'id' && canonicalJson(old[field] ?? null) !== canonicalJson(now[field] ?? null),
  );
  if (fields.length > 0) return fields.length === 1 ? fields[0] : `${fields.slice(0, -1).join(', ')} and ${fields.at(-1)}`;
  return old.id === now.id ? 'its text' : null;
}

/**
 * One refusal per thing deleted: a deleted project is its project.yaml (its other files go with it), a
 * deleted flag its flag file (its configs go with it); any other deleted file of a project stands alone.
 */
function deletions(changes: readonly ChangedPath[]): Array<{ path: string; permission: Permission; oldOid?: string }> {
  const deleted = changes.filter((c) => c.change === 'deleted' && c.path.startsWith(`${layout.projectsDir}/`));
  const projects = new Set<string>();
  const flags = new Set<string>();
  for (const { path } of deleted) {
    const where = classifyPath(path);
    if (where.kind === 'project') projects.add(where.project);
    if (where.kind === 'flag') flags.add(`${where.project}/${where.flag}`);
  }
  const out: Array<{ path: string; permission: Permission; oldOid?: string }> = [];
  for (const { path, oldOid } of deleted) {
    const where = classifyPath(path);
    const project = path.split('/')[1];
    if (projects.has(project)) {
      if (where.kind === 'project') out.push({ path, permission: 'project.delete' });
    } else if (where.kind === 'flag') {
      out.push({ path, permission: 'flag.delete', oldOid });
    } else if (where.kind === 'config') {
      if (!flags.has(`${where.project}/${where.flag}`)) out.push({ path, permission: 'flag.delete' });
    } else if (where.kind === 'segment') {
      // The API deletes segments for every credential that may change them.
      out.push({ path, permission: 'segment.update' });
    } else {
      out.push({ path, permission: 'project.delete' });
    }
  }
  return out;
}

function pathOf(project: string, flag: string | null, environment: EnvironmentName | null, action: AuditAction): string {
  if (action === 'project_create') return layout.projectFile(project);
  // Of the changes read from a push, those of one environment but no config are its kills.yaml's.
  const ofKills = action === 'kill' || action === 'clear_kill' || action === 'change';
  if (environment !== null && (ofKills || flag === null)) return layout.killsFile(project, environment);
  if (flag !== null && environment !== null) return layout.configFile(project, environment, flag);
  if (flag !== null) return layout.flagFile(project, flag);
  return `${layout.projectsDir}/${project}/`;
}
