import { describe, expect, it } from 'vitest';
import { validateDocument } from '../../src/foundations/validation/index.js';

const project = (extra: Record<string, unknown> = {}) => ({ name: 'Shop', slug: 'shop', ...extra });

describe('a project file', () => {
  it('is valid with a name and a slug; the id may be left out', () => {
    expect(validateDocument('project', project())).toEqual([]);
    expect(validateDocument('project', project({ id: 'prj_0123456789abcdef' }))).toEqual([]);
  });

  describe('slug (^[a-z0-9][a-z0-9-]{0,62}$)', () => {
    it.each(['a', '0', 'shop', 'web-shop-2', 'a'.repeat(63), '9-lives'])('accepts %j', (slug) => {
      expect(validateDocument('project', project({ slug }))).toEqual([]);
    });

    it.each(['', 'Shop', '-shop', 'web_shop', 'web shop', 'a'.repeat(64), 'shöp', 'shop/x'])('refuses %j, naming /slug', (slug) => {
      const issues = validateDocument('project', project({ slug }), 'projects/shop/project.yaml');
      expect(issues).toEqual([
        { file: 'projects/shop/project.yaml', path: '/slug', message: expect.stringContaining('^[a-z0-9][a-z0-9-]{0,62}$') },
      ]);
    });
  });

  it('requires name and slug', () => {
    expect(validateDocument('project', {})).toEqual([
      { path: '/name', message: 'is required' },
      { path: '/slug', message: 'is required' },
    ]);
  });

  it('refuses an empty name', () => {
    expect(validateDocument('project', project({ name: '' }))).toEqual([{ path: '/name', message: 'must not be empty' }]);
  });

  it('refuses unknown fields, naming them', () => {
    expect(validateDocument('project', project({ owner: 'me' }))).toEqual([{ path: '/owner', message: 'is not an allowed field' }]);
  });

  it('refuses a document that is not a mapping', () => {
    expect(validateDocument('project', ['shop'])).toEqual([{ path: '', message: 'must be an object' }]);
  });
});
