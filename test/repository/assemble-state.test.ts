import { describe, expect, it } from 'vitest';
import { assembleState, deriveFlagId, parseRepositoryFile, readRepositoryFiles } from '../../src/foundations/repository/index.js';
import { entries, validRepository } from './repo-fixture.js';

function read(files: Record<string, string>) {
  return readRepositoryFiles(entries(files), 'c0ffee');
}

const flagKeys = (files: Record<string, string>, slug = 'shop') => [...(read(files).state.projects.get(slug)?.flags.keys() ?? [])];

describe('assembling a commit into state', () => {
  it('types a valid repository: projects by slug, flags by key, a config per environment, no kills', () => {
    const { state, issues } = read(validRepository());
    expect(issues).toEqual([]);
    expect(state.commit).toBe('c0ffee');
    const shop = state.projects.get('shop')!;
    expect(shop.project.slug).toBe('shop');
    expect([...shop.flags.keys()]).toEqual(['checkout-v2', 'search']);
    const flag = shop.flags.get('checkout-v2')!;
    expect(flag.meta.id).toBe(deriveFlagId('shop', 'checkout-v2'));
    expect(Object.keys(flag.environments)).toEqual(['dev', 'staging', 'prod']);
    // kills.yaml absent means no kills.
    expect(shop.kills).toEqual({ dev: { kills: {} }, staging: { kills: {} }, prod: { kills: {} } });
  });

  it('of no files is an empty state', () => {
    expect(assembleState([], null)).toEqual({ state: { commit: null, projects: new Map() }, issues: [] });
  });

  it('carries the kills of each environment', () => {
    const files = validRepository();
    files['projects/shop/environments/prod/kills.yaml'] = 'kills:\n  search:\n    killedAt: 2025-03-02T14:05:00Z\n    killedBy: alice\n';
    const { state, issues } = read(files);
    expect(issues).toEqual([]);
    expect(state.projects.get('shop')!.kills.prod).toEqual({ kills: { search: { killedAt: '2025-03-02T14:05:00Z', killedBy: 'alice' } } });
    expect(state.projects.get('shop')!.kills.dev).toEqual({ kills: {} });
  });

  describe('cross-file checks, each leaving out only what is broken', () => {
    it('a config without a flag file', () => {
      const files = validRepository();
      files['projects/shop/environments/dev/orphan.yaml'] = files['projects/shop/environments/dev/search.yaml'];
      expect(read(files).issues).toEqual([
        { file: 'projects/shop/environments/dev/orphan.yaml', message: 'has no flag file (expected projects/shop/flags/orphan.yaml)' },
      ]);
      expect(flagKeys(files)).toEqual(['checkout-v2', 'search']);
    });

    it('a flag without a config in one environment', () => {
      const files = validRepository();
      delete files['projects/shop/environments/prod/search.yaml'];
      expect(read(files).issues).toEqual([
        {
          file: 'projects/shop/flags/search.yaml',
          message: 'has no config in prod (expected projects/shop/environments/prod/search.yaml)',
        },
      ]);
      expect(flagKeys(files)).toEqual(['checkout-v2']);
    });

    it('a flag whose key is not its file name', () => {
      const files = validRepository();
      files['projects/shop/flags/search.yaml'] = 'key: search-v2\n';
      expect(read(files).issues).toEqual([
        { file: 'projects/shop/flags/search.yaml', path: '/key', message: 'must equal the file name "search" (found "search-v2")' },
      ]);
      expect(flagKeys(files)).toEqual(['checkout-v2']);
    });

    it('a project whose slug is not its folder name', () => {
      const files = validRepository();
      files['projects/shop/project.yaml'] = 'name: Shop\nslug: store\n';
      const { state, issues } = read(files);
      expect(issues).toEqual([
        { file: 'projects/shop/project.yaml', path: '/slug', message: 'must equal the folder name "shop" (found "store")' },
      ]);
      expect(state.projects.size).toBe(0);
    });

    it('a project folder without project.yaml', () => {
      const files = validRepository();
      delete files['projects/shop/project.yaml'];
      const { state, issues } = read(files);
      expect(issues).toEqual([{ file: 'projects/shop/project.yaml', message: 'is missing: the folder projects/shop needs one' }]);
      expect(state.projects.size).toBe(0);
    });

    it('a kill naming a flag that does not exist', () => {
      const files = validRepository();
      files['projects/shop/environments/dev/kills.yaml'] = 'kills:\n  ghost:\n    killedAt: 2025-03-02T14:05:00Z\n    killedBy: alice\n';
      const { state, issues } = read(files);
      expect(issues).toEqual([
        {
          file: 'projects/shop/environments/dev/kills.yaml',
          path: '/kills/ghost',
          message: 'names flag "ghost", which has no flag file in project "shop"',
        },
      ]);
      expect(state.projects.get('shop')!.kills.dev).toEqual({ kills: {} });
    });

    it('a config value of another type than the flag kind', () => {
      const files = validRepository();
      files['projects/shop/environments/staging/search.yaml'] = 'enabled: true\nrolloutPct: 100\nvalueOn: "true"\nvalueOff: 0\n';
      expect(read(files).issues).toEqual([
        {
          file: 'projects/shop/environments/staging/search.yaml',
          path: '/valueOn',
          message: "must be true or false, as the flag's kind is boolean",
        },
        {
          file: 'projects/shop/environments/staging/search.yaml',
          path: '/valueOff',
          message: "must be true or false, as the flag's kind is boolean",
        },
      ]);
      expect(flagKeys(files)).toEqual(['checkout-v2']);
    });

    it('two flags with the same id, which API paths could not tell apart', () => {
      const files = validRepository();
      files['projects/shop/flags/checkout-v2.yaml'] = 'id: flg_same\nkey: checkout-v2\n';
      files['projects/shop/flags/search.yaml'] = 'id: flg_same\nkey: search\n';
      expect(read(files).issues).toEqual([
        {
          file: 'projects/shop/flags/search.yaml',
          path: '/id',
          message: 'id "flg_same" is already used by projects/shop/flags/checkout-v2.yaml; flag ids must be unique',
        },
      ]);
      expect(flagKeys(files)).toEqual(['checkout-v2']);
    });

    it('two projects with the same id', () => {
      const files = validRepository();
      files['projects/shop/project.yaml'] = 'id: prj_same\nname: Shop\nslug: shop\n';
      files['projects/web/project.yaml'] = 'id: prj_same\nname: Web\nslug: web\n';
      const { state, issues } = read(files);
      expect(issues).toEqual([
        {
          file: 'projects/web/project.yaml',
          path: '/id',
          message: 'id "prj_same" is already used by projects/shop/project.yaml; project ids must be unique',
        },
      ]);
      expect([...state.projects.keys()]).toEqual(['shop']);
    });

    it('two flag keys that differ only in letter case', () => {
      const files = validRepository();
      files['projects/shop/flags/Search.yaml'] = 'key: Search\n';
      for (const env of ['dev', 'staging', 'prod'])
        files[`projects/shop/environments/${env}/Search.yaml`] = files[`projects/shop/environments/${env}/search.yaml`];
      expect(read(files).issues).toEqual([
        {
          file: 'projects/shop/flags/search.yaml',
          path: '/key',
          message: 'differs from flag "Search" only in letter case; the two files collide on case-insensitive file systems',
        },
      ]);
      expect(flagKeys(files)).toEqual(['Search', 'checkout-v2']);
    });

    describe('with the flags that held the id or key before (incumbents)', () => {
      it('keeps the id for the incumbent, whatever the key order, and reports the newcomer at its id', () => {
        const files = validRepository();
        files['projects/shop/flags/checkout-v2.yaml'] = 'id: flg_same\nkey: checkout-v2\n';
        files['projects/shop/flags/search.yaml'] = 'id: flg_same\nkey: search\n';
        const { state, issues } = readRepositoryFiles(entries(files), 'c0ffee', {
          locate: true,
          incumbents: new Set(['projects/shop/flags/search.yaml']),
        });
        expect(issues).toEqual([
          {
            file: 'projects/shop/flags/checkout-v2.yaml',
            path: '/id',
            line: 1,
            column: 5,
            message: 'id "flg_same" is already used by projects/shop/flags/search.yaml; flag ids must be unique',
          },
        ]);
        expect([...state.projects.get('shop')!.flags.keys()]).toEqual(['search']);
      });

      it('keeps the key for the incumbent and reports the newcomer at its key', () => {
        const files = validRepository();
        files['projects/shop/flags/Search.yaml'] = 'key: Search\n';
        for (const env of ['dev', 'staging', 'prod'])
          files[`projects/shop/environments/${env}/Search.yaml`] = files[`projects/shop/environments/${env}/search.yaml`];
        const { state, issues } = readRepositoryFiles(entries(files), 'c0ffee', {
          locate: true,
          incumbents: new Set(['projects/shop/flags/search.yaml']),
        });
        expect(issues).toEqual([
          expect.objectContaining({
            file: 'projects/shop/flags/Search.yaml',
            path: '/key',
            line: 1,
            message: 'differs from flag "search" only in letter case; the two files collide on case-insensitive file systems',
          }),
        ]);
        expect([...state.projects.get('shop')!.flags.keys()]).toEqual(['checkout-v2', 'search']);
      });
    });
  });

  describe('with files that failed to parse', () => {
    it('leaves out the flag of a broken config, without extra issues', () => {
      const files = validRepository();
      files['projects/shop/environments/dev/search.yaml'] = 'enabled: [\n';
      const { issues } = read(files);
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatchObject({
        file: 'projects/shop/environments/dev/search.yaml',
        message: expect.stringMatching(/^YAML syntax error/),
      });
      expect(flagKeys(files)).toEqual(['checkout-v2']);
    });

    it('leaves out a flag with a broken flag file and does not call its configs orphans', () => {
      const files = validRepository();
      files['projects/shop/flags/search.yaml'] = 'key: search\nkind: maybe\n';
      expect(read(files).issues.map((i) => i.file)).toEqual(['projects/shop/flags/search.yaml']);
      expect(flagKeys(files)).toEqual(['checkout-v2']);
    });

    it('leaves out the whole project when a kills.yaml is broken, rather than un-kill its flags', () => {
      const files = validRepository();
      files['projects/shop/environments/prod/kills.yaml'] = 'kills:\n  search:\n    killedBy: alice\n';
      const { state, issues } = read(files);
      expect(issues).toEqual([
        expect.objectContaining({
          file: 'projects/shop/environments/prod/kills.yaml',
          path: '/kills/search/killedAt',
          message: 'is required',
        }),
      ]);
      expect(state.projects.size).toBe(0);
    });

    it('accepts entries without a parsed file in place of broken files', () => {
      const files = validRepository();
      const parsed = entries(files).map(({ path, text }) => ({ path, file: parseRepositoryFile(path, text).file }));
      parsed.push({ path: 'projects/shop/environments/prod/kills.yaml', file: undefined });
      expect(assembleState(parsed, null).state.projects.size).toBe(0);
    });
  });

  it('refuses an entry whose parsed kind does not match its path', () => {
    const project = parseRepositoryFile('projects/shop/project.yaml', 'name: Shop\nslug: shop\n').file!;
    expect(assembleState([{ path: 'projects/shop/flags/x.yaml', file: project }], null).issues).toEqual([
      { file: 'projects/shop/flags/x.yaml', message: 'holds a project file, but its path is that of a flag file' },
    ]);
  });
});
