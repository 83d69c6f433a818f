import { formatRole, parseRole, ROLE_NAMES, type Role } from './roles.js';

/**
 * FLAGOPS_OIDC_ROLES: which role a person signed in with OpenID Connect gets, from the values of their `groups`
 * claim. Roles are read by the one role parser (roles.ts), as sessions and `flagops user add --role` write them.
 */

/**
 * `group=role;group=role…`. A group's name is everything before the entry's last `=`, so names such as
 * `/flag-admins` (Keycloak) or `acme:shop-devs` (GitHub teams through Dex) need no quoting. Throws an Error
 * naming the entry that is wrong.
 */
export function parseGroupRoles(value: string): ReadonlyMap<string, Role> {
  const mapping = new Map<string, Role>();
  for (const entry of value.split(';')) {
    if (entry.trim() === '') continue;
    const eq = entry.lastIndexOf('=');
    const group = entry.slice(0, Math.max(0, eq)).trim();
    if (eq < 0 || group === '') throw new Error(`entry ${JSON.stringify(entry.trim())} is not <group>=<role>`);
    if (mapping.has(group)) throw new Error(`group ${JSON.stringify(group)} is mapped twice`);
    mapping.set(group, parseRole(entry.slice(eq + 1).trim(), `the role of group ${JSON.stringify(group)}`));
  }
  if (mapping.size === 0) throw new Error('maps no group; e.g. flag-admins=admin;shop-devs=editor@shop;support=viewer');
  return mapping;
}

const rank = (role: Role) => ROLE_NAMES.indexOf(role.name);

/**
 * The role of a person in these groups, or null when none of them is mapped. A session holds one role, so when
 * several groups are mapped the highest role wins; the projects of the groups mapped to that role add up (one
 * of them for every project: every project). Groups mapped to a lower role give nothing more.
 */
export function roleOfGroups(mapping: ReadonlyMap<string, Role>, groups: readonly string[]): { role: string; groups: string[] } | null {
  let best: Role | null = null;
  let from: string[] = [];
  for (const group of new Set(groups)) {
    const role = mapping.get(group);
    if (role === undefined) continue;
    if (best === null || rank(role) > rank(best)) {
      best = role;
      from = [group];
    } else if (rank(role) === rank(best)) {
      best =
        best.projects === undefined || role.projects === undefined
          ? { name: best.name }
          : { name: best.name, projects: [...new Set([...best.projects, ...role.projects])].sort() };
      from.push(group);
    }
  }
  return best === null ? null : { role: formatRole(best), groups: from };
}
