/**
 * FLAGOPS_OIDC_ROLES: which role a person signed in with OpenID Connect gets, from the values of their `groups`
 * claim. A role is written `<viewer|editor|admin>[@<project slug>[,<project slug>...]]`, as sessions carry it
 * (docs/credentials.md).
 */

export type RoleLevel = 'viewer' | 'editor' | 'admin';

/** A role read: its level, and the projects it is limited to (null: every project). */
export interface Grant {
  level: RoleLevel;
  projects: readonly string[] | null;
}

const LEVELS: readonly RoleLevel[] = ['viewer', 'editor', 'admin'];
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** A role's text as a Grant; throws an Error saying what is wrong. */
export function parseGrant(text: string): Grant {
  const at = text.indexOf('@');
  const level = (at < 0 ? text : text.slice(0, at)).trim();
  if (!LEVELS.includes(level as RoleLevel)) {
    throw new Error(`${JSON.stringify(text)} is not a role: expected viewer, editor or admin, optionally @<project slug>[,<slug>...]`);
  }
  if (at < 0) return { level: level as RoleLevel, projects: null };
  const projects = text
    .slice(at + 1)
    .split(',')
    .map((slug) => slug.trim());
  const bad = projects.find((slug) => !SLUG.test(slug));
  if (bad !== undefined) throw new Error(`${JSON.stringify(text)}: ${JSON.stringify(bad)} is not a project slug (${SLUG.source})`);
  return { level: level as RoleLevel, projects: [...new Set(projects)].sort() };
}

export function formatGrant(grant: Grant): string {
  return grant.projects === null ? grant.level : `${grant.level}@${grant.projects.join(',')}`;
}

/**
 * `group=role;group=role…`. A group's name is everything before the entry's last `=`, so names such as
 * `/flag-admins` (Keycloak) or `acme:shop-devs` (GitHub teams through Dex) need no quoting. Throws an Error
 * naming the entry that is wrong.
 */
export function parseGroupRoles(value: string): ReadonlyMap<string, Grant> {
  const mapping = new Map<string, Grant>();
  for (const entry of value.split(';')) {
    if (entry.trim() === '') continue;
    const eq = entry.lastIndexOf('=');
    const group = entry.slice(0, Math.max(0, eq)).trim();
    if (eq < 0 || group === '') throw new Error(`entry ${JSON.stringify(entry.trim())} is not <group>=<role>`);
    if (mapping.has(group)) throw new Error(`group ${JSON.stringify(group)} is mapped twice`);
    mapping.set(group, parseGrant(entry.slice(eq + 1).trim()));
  }
  if (mapping.size === 0) throw new Error('maps no group; e.g. flag-admins=admin;shop-devs=editor@shop;support=viewer');
  return mapping;
}

/**
 * The role of a person in these groups, or null when none of them is mapped. A session holds one role, so when
 * several groups are mapped the highest level wins; the projects of the groups mapped to that level add up (one
 * of them for every project: every project). Groups mapped to a lower level give nothing more.
 */
export function roleOfGroups(mapping: ReadonlyMap<string, Grant>, groups: readonly string[]): { role: string; groups: string[] } | null {
  let best: Grant | null = null;
  let from: string[] = [];
  for (const group of new Set(groups)) {
    const grant = mapping.get(group);
    if (grant === undefined) continue;
    const rank = LEVELS.indexOf(grant.level);
    if (best === null || rank > LEVELS.indexOf(best.level)) {
      best = grant;
      from = [group];
    } else if (rank === LEVELS.indexOf(best.level)) {
      const projects: string[] | null =
        best.projects === null || grant.projects === null ? null : [...new Set([...best.projects, ...grant.projects])].sort();
      best = { level: best.level, projects };
      from.push(group);
    }
  }
  return best === null ? null : { role: formatGrant(best), groups: from };
}
