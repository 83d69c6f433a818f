import { type EnvironmentName, isEnvironmentName } from '@flagops/core';
import { InvalidInputError } from '../errors/kinds.js';
import type { KeyRecord } from '../state/index.js';
import { isDateTime } from '../validation/index.js';
import type { KeyKind } from './key-format.js';
import type { Principal } from './principal.js';
import type { Scope } from './scope.js';

/**
 * The limits a key may be given at creation: an admin or agent key all three; an sdk key, which has its one
 * project and environment instead, only an expiry.
 */
export interface KeyLimits {
  projects?: string[];
  environments?: EnvironmentName[];
  /** ISO-8601, UTC. */
  expiresAt?: string;
}

const MAX_PROJECTS = 100;

/**
 * Checks the limits asked for a new key of `kind` (400 naming the field): lists of project ids and environment
 * names, and an expiry that is a well-formed moment in the future. Answers them normalised (expiry in UTC).
 */
export function checkKeyLimits(kind: KeyKind, input: KeyLimits, now: Date): KeyLimits {
  const { projects, environments, expiresAt } = input;
  const limits: KeyLimits = {};
  if (kind === 'sdk') {
    for (const field of ['projects', 'environments'] as const) {
      if (input[field] !== undefined)
        throw new InvalidInputError(`${field} is for admin and agent keys; an sdk key has its one projectId and environment`, field);
    }
  }
  if (projects !== undefined) {
    if (
      !Array.isArray(projects) ||
      projects.length === 0 ||
      projects.length > MAX_PROJECTS ||
      !projects.every((p) => typeof p === 'string' && p !== '')
    )
      throw new InvalidInputError(`projects must be a list of 1 to ${MAX_PROJECTS} project ids`, 'projects');
    limits.projects = [...new Set(projects)];
  }
  if (environments !== undefined) {
    if (!Array.isArray(environments) || environments.length === 0 || !environments.every(isEnvironmentName))
      throw new InvalidInputError('environments must be a list of dev, staging and prod', 'environments');
    limits.environments = [...new Set(environments)];
  }
  if (expiresAt !== undefined) {
    // With an offset: a moment, not a date whose time zone the reader would have to guess; and a day the
    // calendar has (Date.parse would move 30 February to 2 March).
    const at = typeof expiresAt === 'string' && isDateTime(expiresAt) ? Date.parse(expiresAt) : Number.NaN;
    if (Number.isNaN(at))
      throw new InvalidInputError('expiresAt must be an ISO-8601 date and time with an offset, e.g. 2030-01-31T18:00:00Z', 'expiresAt');
    if (at <= now.getTime()) throw new InvalidInputError(`expiresAt must be in the future (it is now ${now.toISOString()})`, 'expiresAt');
    limits.expiresAt = new Date(at).toISOString();
  }
  return limits;
}

/** A key's limits as a scope (undefined: none). */
export function scopeOfKey(record: Pick<KeyRecord, 'projects' | 'environments'>): Scope | undefined {
  if (record.projects === undefined && record.environments === undefined) return undefined;
  const scope: Scope = {};
  if (record.projects !== undefined) scope.projectIds = new Set(record.projects);
  if (record.environments !== undefined) scope.environments = new Set(record.environments);
  return scope;
}

/** What a key covers, for the question whether a limited admin key may manage it. */
type Coverage = Pick<KeyRecord, 'kind' | 'projects' | 'environments' | 'expiresAt' | 'projectId' | 'environment'>;

/**
 * Whether `key` stays within what `manager` may reach: every project and environment it covers is one the
 * manager covers, and it ends no later than the manager (an sdk key too: it evaluates until it ends). A key
 * manager without limits manages every key.
 */
export function within(manager: Pick<Principal, 'scope' | 'expiresAt'>, key: Coverage): boolean {
  const scope = manager.scope;
  if (scope?.projectIds !== undefined) {
    const projects = key.kind === 'sdk' ? [key.projectId] : key.projects;
    if (projects === undefined || !projects.every((p) => p !== undefined && scope.projectIds!.has(p))) return false;
  }
  if (scope?.environments !== undefined) {
    const environments = key.kind === 'sdk' ? [key.environment] : key.environments;
    if (environments === undefined || !environments.every((e) => e !== undefined && scope.environments!.has(e))) return false;
  }
  if (manager.expiresAt !== undefined) {
    if (key.expiresAt === undefined || Date.parse(key.expiresAt) > Date.parse(manager.expiresAt)) return false;
  }
  return true;
}

/**
 * The limits of a key a limited admin key makes: what the request leaves out is the manager's own (a key made
 * by a limited key is never wider than it); what it gives is kept, and checked by `within` afterwards.
 */
export function inheritLimits(manager: Pick<Principal, 'scope' | 'expiresAt'>, kind: KeyKind, limits: KeyLimits): KeyLimits {
  const out = { ...limits };
  if (out.expiresAt === undefined && manager.expiresAt !== undefined) out.expiresAt = manager.expiresAt;
  // An sdk key's project and environment are its own fields, never inherited.
  if (kind === 'sdk') return out;
  if (out.projects === undefined && manager.scope?.projectIds !== undefined) out.projects = [...manager.scope.projectIds];
  if (out.environments === undefined && manager.scope?.environments !== undefined) out.environments = [...manager.scope.environments];
  return out;
}
