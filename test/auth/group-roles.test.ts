import { describe, expect, it } from 'vitest';
import { parseGroupRoles, roleOfGroups } from '../../src/foundations/auth/group-roles.js';

describe('FLAGOPS_OIDC_ROLES: groups to roles', () => {
  const mapping = parseGroupRoles(
    ' flag-admins=admin ; shop-devs=editor@shop;web-devs=editor@web,shop;support=viewer;acme:ops=editor;/staff=viewer@web',
  );

  it('reads group=role entries; a group name is everything before the last =', () => {
    expect([...mapping.keys()]).toEqual(['flag-admins', 'shop-devs', 'web-devs', 'support', 'acme:ops', '/staff']);
    expect(mapping.get('web-devs')).toEqual({ name: 'editor', projects: ['web', 'shop'] });
    expect(parseGroupRoles('a=b=viewer').get('a=b')).toEqual({ name: 'viewer' });
  });

  it('refuses what is not a mapping, naming the entry', () => {
    expect(() => parseGroupRoles('')).toThrow(/maps no group/);
    expect(() => parseGroupRoles('admins')).toThrow('entry "admins" is not <group>=<role>');
    expect(() => parseGroupRoles('admins=owner')).toThrow('the role of group "admins": "owner" names no role');
    expect(() => parseGroupRoles('devs=editor@Shop')).toThrow('lists "Shop", which is not a project slug');
    expect(() => parseGroupRoles('devs=editor@')).toThrow('lists "", which is not a project slug');
    expect(() => parseGroupRoles('a=viewer;a=admin')).toThrow('group "a" is mapped twice');
    expect(() => parseGroupRoles('a=admin@shop,')).toThrow(/not a project slug/);
  });

  it('gives the highest role of the mapped groups; projects of that level add up; unmapped groups give nothing', () => {
    expect(roleOfGroups(mapping, ['marketing'])).toBeNull();
    expect(roleOfGroups(mapping, [])).toBeNull();
    expect(roleOfGroups(mapping, ['support', 'flag-admins', 'shop-devs'])).toEqual({ role: 'admin', groups: ['flag-admins'] });
    expect(roleOfGroups(mapping, ['shop-devs', 'web-devs', 'support'])).toEqual({
      role: 'editor@shop,web',
      groups: ['shop-devs', 'web-devs'],
    });
    expect(roleOfGroups(mapping, ['shop-devs', 'acme:ops'])).toEqual({ role: 'editor', groups: ['shop-devs', 'acme:ops'] });
    expect(roleOfGroups(mapping, ['support', '/staff'])?.role).toBe('viewer');
    expect(roleOfGroups(mapping, ['/staff', '/staff'])).toEqual({ role: 'viewer@web', groups: ['/staff'] });
  });
});
