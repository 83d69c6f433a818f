import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPERATORS } from '@flagops/core';
import { afterEach, describe, expect, it } from 'vitest';
import { readRepositoryDirectory } from '../../src/apps/cli/read-directory.js';
import { readRepositoryFiles } from '../../src/foundations/repository/index.js';
import { git } from '../helpers/git-cli.js';
import { flagops, SAMPLE, sampleCopy } from './cli-harness.js';

describe('flagops validate', () => {
  let copy: { dir: string; remove: () => void } | undefined;
  afterEach(() => copy?.remove());

  /** A copy of the sample with `edit` applied to its files, validated from its parent directory. */
  async function validateBroken(edit: (dir: string) => void, ...options: string[]) {
    copy = sampleCopy();
    edit(copy.dir);
    return flagops(['validate', copy.dir, ...options]);
  }

  describe('on the sample repository in flags/', () => {
    it('exits 0 and says it is valid', async () => {
      const result = await flagops(['validate', 'flags']);
      expect(result).toEqual({ code: 0, stdout: 'flags: valid (1 valid project, 4 valid flags, 19 files checked)\n', stderr: '' });
    });

    it('validates the current directory by default', async () => {
      expect((await flagops(['validate'], SAMPLE)).code).toBe(0);
    });

    it('uses every operator, a rule rolloutPct, each kind, an archived flag and a kill, as documented', async () => {
      const files = (await readRepositoryDirectory(SAMPLE))!;
      const { state } = readRepositoryFiles(files, null);
      const shop = state.projects.get('shop')!;
      const flags = [...shop.flags.values()];
      const rules = flags.flatMap((f) => Object.values(f.environments).flatMap((c) => c.rules));
      expect(new Set(rules.flatMap((r) => r.conditions.map((c) => c.op)))).toEqual(new Set(OPERATORS));
      expect(rules.some((r) => r.rolloutPct !== undefined)).toBe(true);
      expect(new Set(flags.map((f) => f.meta.kind))).toEqual(new Set(['boolean', 'string', 'number', 'json']));
      expect(flags.filter((f) => f.meta.archivedAt !== null)).toHaveLength(1);
      expect(Object.keys(shop.kills.staging.kills)).toEqual(['search-ranking']);
    });
  });

  describe('on a broken copy, exits 1 and prints file:line:column: path: message', () => {
    it('for a YAML syntax error', async () => {
      const result = await validateBroken((dir) => {
        writeFileSync(join(dir, 'projects/shop/environments/prod/checkout-v2.yaml'), 'enabled: true\nrolloutPct: [10\nvalueOn: true\n');
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`${copy!.dir}/projects/shop/environments/prod/checkout-v2.yaml:3:1: YAML syntax error:`);
      expect(result.stdout).toMatch(/: 1 issue in 1 file \(1 valid project, 3 valid flags, 19 files checked\)\n$/);
    });

    it('for a value nested 100,000 levels deep, naming the limit', async () => {
      const result = await validateBroken((dir) => {
        const path = join(dir, 'projects/shop/environments/prod/checkout-v2.yaml');
        writeFileSync(path, readFileSync(path, 'utf8').replace(/^valueOn: .*$/m, `valueOn: ${'['.repeat(100_000)}${']'.repeat(100_000)}`));
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(
        new RegExp(`${copy!.dir}/projects/shop/environments/prod/checkout-v2\\.yaml:\\d+:\\d+: is nested deeper than 64 levels`),
      );
      expect(result.stdout).not.toContain('call stack');
    });

    it('for a file that is not UTF-8', async () => {
      const result = await validateBroken((dir) => {
        const path = join(dir, 'projects/shop/environments/prod/checkout-v2.yaml');
        writeFileSync(path, Buffer.concat([Buffer.from('# r'), Buffer.from([0xe9]), Buffer.from('glage\n'), readFileSync(path)]));
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`${copy!.dir}/projects/shop/environments/prod/checkout-v2.yaml:1:4: is not valid UTF-8 text`);
    });

    it('for a schema error, with the line of the value', async () => {
      const result = await validateBroken((dir) => {
        const path = join(dir, 'projects/shop/environments/prod/checkout-v2.yaml');
        writeFileSync(path, readFileSync(path, 'utf8').replace('rolloutPct: 10', 'rolloutPct: 150'));
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(
        `${copy!.dir}/projects/shop/environments/prod/checkout-v2.yaml:2:13: /rolloutPct: must be a number from 0 to 100\n`,
      );
    });

    it('for bad lifecycle data: a type, an expiry and a field it does not know, each with its line', async () => {
      const flag = (lifecycle: string) => (dir: string) => {
        const path = join(dir, 'projects/shop/flags/checkout-v2.yaml');
        writeFileSync(path, `${readFileSync(path, 'utf8')}lifecycle:\n${lifecycle}`);
      };
      const result = await validateBroken(flag('  type: temporary\n  owner: team-checkout\n  expiresAt: 2027-02-30\n  expires: soon\n'));
      expect(result.code).toBe(1);
      const file = `${copy!.dir}/projects/shop/flags/checkout-v2.yaml`;
      expect(result.stdout).toContain(
        `${file}:8:9: /lifecycle/type: must be release, experiment, operational, permission or kill-switch\n`,
      );
      expect(result.stdout).toContain(
        `${file}:10:14: /lifecycle/expiresAt: must be an ISO 8601 date such as 2027-03-31 or a date-time such as 2027-03-31T12:00:00Z\n`,
      );
      expect(result.stdout).toContain(`${file}:11:12: /lifecycle/expires: is not an allowed field\n`);
      expect(result.stdout).toMatch(/: 3 issues in 1 file /);
      copy!.remove();
      const valid = await validateBroken(flag('  type: experiment\n  owner: team-checkout\n  expiresAt: 2027-03-31\n'));
      expect(valid.code).toBe(0);
    });

    it('for a budget out of range or naming an unknown actor type, and not for a valid one', async () => {
      const budgets = (text: string) => (dir: string) =>
        writeFileSync(join(dir, 'projects/shop/project.yaml'), `name: Shop\nslug: shop\nbudgets:\n${text}`);
      const result = await validateBroken(budgets('  prod:\n    movedPctPerHour: 120\n    actors: [robot]\n'));
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`${copy!.dir}/projects/shop/project.yaml:5:22: /budgets/prod/movedPctPerHour: must be <= 100`);
      expect(result.stdout).toContain(
        `${copy!.dir}/projects/shop/project.yaml:6:14: /budgets/prod/actors/0: must be one of "admin", "agent", "session"`,
      );
      copy!.remove();
      expect((await validateBroken(budgets('  prod:\n    movedPctPerHour: 10\n    actors: [agent]\n'))).code).toBe(0);
    });

    it('for a schedule whose steps are out of order, at the later step', async () => {
      const result = await validateBroken((dir) => {
        const path = join(dir, 'projects/shop/environments/prod/checkout-v2.yaml');
        const schedule =
          'schedule:\n  - at: 2026-11-25T09:00:00Z\n    set: { rolloutPct: 50 }\n  - at: 2026-11-24T09:00:00Z\n    set: { rolloutPct: 25 }\n';
        writeFileSync(path, readFileSync(path, 'utf8') + schedule);
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(
        /checkout-v2\.yaml:\d+:9: \/schedule\/1\/at: must be later than the step before it \(\/schedule\/0\/at\): steps are strictly ascending\n/,
      );
    });

    it('for a guard without a bound, at the guard, and for one whose min is above its max', async () => {
      const result = await validateBroken((dir) => {
        const path = join(dir, 'projects/shop/environments/prod/checkout-v2.yaml');
        const schedule = [
          'schedule:',
          '  - at: 2026-11-24T09:00:00Z',
          '    set: { rolloutPct: 25 }',
          '    guard: { query: up }',
          '  - at: 2026-11-25T09:00:00Z',
          '    set: { rolloutPct: 50 }',
          '    guard: { query: up, min: 2, max: 1, intervalSeconds: 0 }',
          '',
        ].join('\n');
        writeFileSync(path, readFileSync(path, 'utf8') + schedule);
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/checkout-v2\.yaml:\d+:\d+: \/schedule\/0\/guard: must give max, min or both/);
      expect(result.stdout).toMatch(
        /checkout-v2\.yaml:\d+:\d+: \/schedule\/1\/guard\/intervalSeconds: must be a whole number of seconds from 1 to 86400/,
      );
      expect(result.stdout).toMatch(/checkout-v2\.yaml:\d+:\d+: \/schedule\/1\/guard\/min: must be at most max \(1\)/);
    });

    it('for a flag missing an environment', async () => {
      const result = await validateBroken((dir) => unlinkSync(join(dir, 'projects/shop/environments/staging/max-cart-items.yaml')));
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(
        `${copy!.dir}/projects/shop/flags/max-cart-items.yaml: has no config in staging (expected projects/shop/environments/staging/max-cart-items.yaml)\n`,
      );
    });

    it('for a flag key that is not the file name', async () => {
      const result = await validateBroken((dir) => {
        const path = join(dir, 'projects/shop/flags/search-ranking.yaml');
        writeFileSync(path, readFileSync(path, 'utf8').replace('key: search-ranking', 'key: search'));
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(
        `${copy!.dir}/projects/shop/flags/search-ranking.yaml:1:6: /key: must equal the file name "search-ranking" (found "search")\n`,
      );
    });

    it('for every issue of a project one of whose segment files is invalid, not only the segment', async () => {
      const config = (extra: string) => `enabled: true\nrolloutPct: 100\nvalueOn: neural\nvalueOff: classic\n${extra}`;
      const result = await validateBroken((dir) => {
        mkdirSync(join(dir, 'projects/shop/segments'));
        writeFileSync(join(dir, 'projects/shop/segments/wrongname.yaml'), 'key: other\n');
        const flag = join(dir, 'projects/shop/flags/holiday-banner.yaml');
        writeFileSync(flag, readFileSync(flag, 'utf8').replace('key: holiday-banner', 'key: typo-key'));
        unlinkSync(join(dir, 'projects/shop/environments/staging/max-cart-items.yaml'));
        writeFileSync(
          join(dir, 'projects/shop/environments/dev/search-ranking.yaml'),
          config('prerequisites:\n  - flag: no-such-flag\n    variation: "on"\n'),
        );
        // The segment whose file is invalid is reported once, on its file; the one without a file is an issue here.
        const segments = '      - op: in_segment\n        value: wrongname\n      - op: in_segment\n        value: nobody\n';
        writeFileSync(
          join(dir, 'projects/shop/environments/prod/search-ranking.yaml'),
          config(`rules:\n  - id: beta\n    serve: "on"\n    conditions:\n${segments}`),
        );
        writeFileSync(
          join(dir, 'projects/shop/environments/prod/kills.yaml'),
          'kills:\n  ghost:\n    killedAt: "2026-01-01T00:00:00Z"\n    killedBy: ana\n',
        );
      });
      expect(result.code).toBe(1);
      const at = (path: string) => `${copy!.dir}/projects/shop/${path}`;
      expect(result.stdout.split('\n').filter(Boolean)).toEqual([
        `${at('segments/wrongname.yaml')}:1:6: /key: must equal the file name (found "other")`,
        `${at('flags/holiday-banner.yaml')}:1:6: /key: must equal the file name "holiday-banner" (found "typo-key")`,
        `${at('flags/max-cart-items.yaml')}: has no config in staging (expected projects/shop/environments/staging/max-cart-items.yaml)`,
        `${at('environments/prod/search-ranking.yaml')}:12:16: /rules/0/conditions/1/value: names segment "nobody", which project "shop" does not have (expected projects/shop/segments/nobody.yaml)`,
        `${at('environments/dev/search-ranking.yaml')}:6:11: /prerequisites/0/flag: names flag "no-such-flag", which project "shop" does not have`,
        `${at('environments/prod/kills.yaml')}:3:5: /kills/ghost: names flag "ghost", which has no flag file in project "shop"`,
        `${copy!.dir}: 6 issues in 6 files (0 valid projects, 0 valid flags, 19 files checked)`,
      ]);
    });

    it('as GitHub annotations with --format github', async () => {
      const result = await validateBroken(
        (dir) => {
          const path = join(dir, 'projects/shop/environments/prod/checkout-v2.yaml');
          writeFileSync(path, readFileSync(path, 'utf8').replace('rolloutPct: 10', 'rolloutPct: 150'));
        },
        '--format',
        'github',
      );
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(
        `::error file=${copy!.dir}/projects/shop/environments/prod/checkout-v2.yaml,line=2,col=13,title=flagops validate::/rolloutPct: must be a number from 0 to 100\n`,
      );
    });
  });

  describe('with a flag copied under a new key, its id kept', () => {
    const ID = 'flg_0123456789abcdef';
    /** search-ranking with its id written in, committed; then its four files copied to `ranking` (first by key). */
    function copiedFlag(dir: string): void {
      const flagFile = join(dir, 'projects/shop/flags/search-ranking.yaml');
      writeFileSync(flagFile, `id: ${ID}\n${readFileSync(flagFile, 'utf8')}`);
      git(dir, 'init', '--quiet', '--initial-branch=main');
      git(dir, 'add', '-A');
      git(dir, 'commit', '--quiet', '-m', 'the sample');
      for (const sub of ['flags', 'environments/dev', 'environments/staging', 'environments/prod']) {
        const text = readFileSync(join(dir, 'projects/shop', sub, 'search-ranking.yaml'), 'utf8');
        writeFileSync(join(dir, 'projects/shop', sub, 'ranking.yaml'), text.replace('key: search-ranking', 'key: ranking'));
      }
    }

    it('names the copy with --base, where the original had the id', async () => {
      const result = await validateBroken(copiedFlag, '--base', 'main');
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(
        `${copy!.dir}/projects/shop/flags/ranking.yaml:1:5: /id: id "${ID}" is already used by projects/shop/flags/search-ranking.yaml; flag ids must be unique\n`,
      );
      expect(result.stdout).toMatch(/: 1 issue in 1 file \(1 valid project, 4 valid flags, 23 files checked\)\n$/);
    });

    it('names the later by key without --base, having no history to go by', async () => {
      const result = await validateBroken(copiedFlag);
      expect(result.stdout).toContain(`${copy!.dir}/projects/shop/flags/search-ranking.yaml:1:5: /id: id "${ID}" is already used by`);
    });

    it('exits 1 for a --base that is no commit', async () => {
      const result = await validateBroken(copiedFlag, '--base', 'no-such-branch');
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('--base no-such-branch is not a commit of the git repository');
    });
  });

  describe('refuses what a push refuses', () => {
    it('paths differing only in letter case (a file or a folder), and a .YAML or .Yml out of the layout', async () => {
      const result = await validateBroken((dir) => {
        writeFileSync(join(dir, 'projects/shop/environments/prod/checkout-v2.YAML'), 'enabled: true\nrolloutPct: 100\n');
        mkdirSync(join(dir, 'projects/shop/Environments/prod'), { recursive: true });
        writeFileSync(join(dir, 'projects/shop/Environments/prod/checkout-v2.txt'), 'enabled: true\n');
        writeFileSync(join(dir, 'projects/shop/flags/nf4.Yml'), 'key: nf4\n');
      });
      expect(result.code).toBe(1);
      const at = `${copy!.dir}/projects/shop`;
      const collide = 'only in letter case; the two collide on case-insensitive file systems (macOS and Windows checkouts)';
      expect(result.stdout).toContain(`${at}/Environments: differs from projects/shop/environments ${collide}`);
      expect(result.stdout).toContain(
        `${at}/environments/prod/checkout-v2.YAML: differs from projects/shop/environments/prod/checkout-v2.yaml ${collide}`,
      );
      expect(result.stdout).toContain(`${at}/environments/prod/checkout-v2.YAML: is not part of the repository layout`);
      expect(result.stdout).toContain(`${at}/flags/nf4.Yml: is not part of the repository layout`);
      expect(result.stdout).not.toContain('Environments/prod/checkout-v2.txt');
    });

    it('a symbolic link and a file over 1 MiB, with --base or without, not reading the files until they are gone', async () => {
      const linked = (dir: string) => {
        git(dir, 'init', '--quiet', '--initial-branch=main');
        git(dir, 'add', '-A');
        git(dir, 'commit', '--quiet', '-m', 'the sample');
        symlinkSync('checkout-v2.yaml', join(dir, 'projects/shop/environments/dev/lnk.yaml'));
        writeFileSync(join(dir, 'projects/shop/big.txt'), Buffer.alloc(2_000_000, 'x'));
        // A config replaced by a link is a link, not a config gone missing.
        unlinkSync(join(dir, 'projects/shop/environments/prod/checkout-v2.yaml'));
        symlinkSync('holiday-banner.yaml', join(dir, 'projects/shop/environments/prod/checkout-v2.yaml'));
      };
      for (const options of [[], ['--base', 'main']]) {
        const result = await validateBroken(linked, ...options);
        expect(result.code).toBe(1);
        const at = `${copy!.dir}/projects/shop`;
        expect(result.stdout).toBe(
          [
            `${at}/big.txt: 1.9 MiB is over the limit of 1 MiB per file`,
            `${at}/environments/dev/lnk.yaml: symbolic links are not allowed; commit the file itself`,
            `${at}/environments/prod/checkout-v2.yaml: symbolic links are not allowed; commit the file itself`,
            `${copy!.dir}: 3 issues in 3 files; the files are checked once these are fixed`,
            '',
          ].join('\n'),
        );
        copy!.remove();
      }
    });

    it('a submodule', async () => {
      const result = await validateBroken((dir) => {
        mkdirSync(join(dir, 'projects/shop/vendor'));
        writeFileSync(join(dir, 'projects/shop/vendor/.git'), 'gitdir: ../../../.git/modules/vendor\n');
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`${copy!.dir}/projects/shop/vendor: submodules are not allowed in the flags repository\n`);
    });
  });

  describe('with a project given another project’s id', () => {
    const ID = 'prj_0123456789abcdef';
    /** A project `web` with its id written in, committed; then shop (first by slug) given web's id. */
    function copiedProjectId(dir: string): void {
      mkdirSync(join(dir, 'projects/web'));
      writeFileSync(join(dir, 'projects/web/project.yaml'), `id: ${ID}\nname: Web\nslug: web\n`);
      git(dir, 'init', '--quiet', '--initial-branch=main');
      git(dir, 'add', '-A');
      git(dir, 'commit', '--quiet', '-m', 'the sample and web');
      const shop = join(dir, 'projects/shop/project.yaml');
      writeFileSync(shop, `id: ${ID}\n${readFileSync(shop, 'utf8')}`);
    }

    it('names the project that took the id with --base, not the one that had it', async () => {
      const result = await validateBroken(copiedProjectId, '--base', 'main');
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(
        `${copy!.dir}/projects/shop/project.yaml:1:5: /id: id "${ID}" is already used by projects/web/project.yaml; project ids must be unique\n`,
      );
      // The same line is an id change against --base too: both are said of shop's project.yaml.
      expect(result.stdout).toMatch(/: 2 issues in 1 file \(1 valid project, /);
    });
  });

  describe('with an id changed against --base', () => {
    /** The sample committed, then the ids of project.yaml and checkout-v2 written into them: derived (`same`) or new. */
    const newIds = (same: boolean) => (dir: string) => {
      git(dir, 'init', '--quiet', '--initial-branch=main');
      git(dir, 'add', '-A');
      git(dir, 'commit', '--quiet', '-m', 'the sample');
      for (const [file, id] of [
        ['projects/shop/project.yaml', same ? 'prj_5042d146667518a1' : 'prj_again'],
        ['projects/shop/flags/checkout-v2.yaml', same ? 'flg_204eaf85c7816425' : 'flg_renamed'],
      ]) {
        writeFileSync(join(dir, file), `id: ${id}\n${readFileSync(join(dir, file), 'utf8')}`);
      }
    };

    it('reports each changed id at its id line, as a push over /git refuses it', async () => {
      const result = await validateBroken(newIds(false), '--base', 'main');
      expect(result.code).toBe(1);
      const stable = 'to change one deliberately, use flagops import --replace --yes';
      expect(result.stdout).toContain(
        `${copy!.dir}/projects/shop/project.yaml:1:5: /id: changes the project's id prj_5042d146667518a1 → prj_again; ids are stable (SDK keys, keys limited to the project and API paths name prj_5042d146667518a1): ${stable}\n`,
      );
      expect(result.stdout).toContain(
        `${copy!.dir}/projects/shop/flags/checkout-v2.yaml:1:5: /id: changes the flag's id flg_204eaf85c7816425 → flg_renamed; ids are stable (API paths (/api/v1/flags/flg_204eaf85c7816425) name flg_204eaf85c7816425): ${stable}\n`,
      );
      expect(result.stdout).toMatch(/: 2 issues in 2 files \(1 valid project, 4 valid flags, 19 files checked\)\n$/);
      // Without --base there is nothing to compare with.
      expect((await flagops(['validate', copy!.dir])).code).toBe(0);
    });

    it('takes the derived id written into the file as the same id', async () => {
      expect((await validateBroken(newIds(true), '--base', 'main')).code).toBe(0);
    });
  });

  it('exits 1 on a directory without projects/, which is not a flags repository', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'flagops-empty-'));
    try {
      const result = await flagops(['validate', empty]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('has no projects/ folder');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('exits 1 on a directory that cannot be read (and import too, writing nothing), 2 on a bad option', async () => {
    expect(await flagops(['validate', 'no-such-dir'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no-such-dir is not a directory that can be read'),
    });
    expect(await flagops(['import', 'no-such-dir', '--org', 'acme', '--data-dir', 'no-such-data'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no-such-dir is not a directory that can be read; nothing was written'),
    });
    expect(await flagops(['validate', '--format', 'xml'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--format must be one of text, github'),
    });
    expect(await flagops(['validate', '--strict'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("Unknown option '--strict'"),
    });
  });
});
