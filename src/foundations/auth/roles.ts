import { InvalidInputError } from '../errors/kinds.js';
import type { Scope } from './scope.js';

/** What a dashboard session may do: read only, what an agent key may, or what a session always could. */
export const ROLE_NAMES = ['viewer', 'editor', 'admin'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

/** A role as parsed: its name and, when limited, the project slugs it covers (other projects are not found). */
export interface Role {
  name: RoleName;
  projects?: readonly string[];
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const MAX_PROJECTS = 100;

/** A session without a role is what sessions always were: an admin of the whole organisation. */
export const DEFAULT_ROLE: Role = Object.freeze({ name: 'admin' });

/**
 * `<viewer|editor|admin>[@<slug>[,<slug>...]]`, as `flagops user add --role`, FLAGOPS_OIDC_ROLES and session
 * records write it. Throws InvalidInputError (naming `field`) for anything else.
 */
export function parseRole(text: string, field = 'role'): Role {
  const fail = (why: string): never => {
    throw new InvalidInputError(
      `${field}: ${JSON.stringify(text)} ${why}; a role is viewer, editor or admin, optionally limited to projects: editor@shop,web`,
      field,
    );
  };
  if (typeof text !== 'string') return fail('is not a string');
  const at = text.indexOf('@');
  const name = (at < 0 ? text : text.slice(0, at)).trim();
  if (!(ROLE_NAMES as readonly string[]).includes(name)) return fail(`names no role (${ROLE_NAMES.join(', ')})`);
  if (at < 0) return { name: name as RoleName };
  const projects = text
    .slice(at + 1)
    .split(',')
    .map((s) => s.trim());
  if (projects.length > MAX_PROJECTS) return fail(`lists more than ${MAX_PROJECTS} projects`);
  for (const slug of projects) if (!SLUG.test(slug)) return fail(`lists ${JSON.stringify(slug)}, which is not a project slug`);
  return { name: name as RoleName, projects: [...new Set(projects)] };
}

/** Fails closed: a stored role that does not parse (edited by hand) sees nothing. */
const NOTHING: Role = Object.freeze({ name: 'viewer', projects: [] });

/** The role of a stored session or user (absent: admin). A role that cannot be parsed grants nothing. */
export function roleOf(text: string | undefined): Role {
  if (text === undefined) return DEFAULT_ROLE;
  try {
    return parseRole(text);
  } catch {
    return NOTHING;
  }
}

/** The written form, `editor@shop,web`. */
export function formatRole(role: Role): string {
  return role.projects === undefined ? role.name : `${role.name}@${role.projects.join(',')}`;
}

/** The projects a role is limited to, as a scope (none: the whole organisation). */
export function scopeOfRole(role: Role): Scope | undefined {
  return role.projects === undefined ? undefined : { projectSlugs: new Set(role.projects) };
}
