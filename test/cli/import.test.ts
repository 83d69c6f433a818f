import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { FileCommitTrustStore } from '../../src/foundations/state/files/file-commit-trust-store.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { pushEdit } from '../helpers/git-cli.js';
import { flagops, SAMPLE, sampleCopy } from './cli-harness.js';

const PROD_KILLS =
  'kills:\n  checkout-v2:\n    killedAt: 2026-11-21T12:34:37.000Z\n    killedBy: svc_agt_lC8YX7RM\n    reason: error rate above 5%\n';

describe('flagops import', () => {
  let dataDir: string;
  const cleanups: Array<() => void> = [];

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'flagops-data-'));
  });

  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  async function withRepo<T>(fn: (repo: FlagRepository) => Promise<T>): Promise<T> {
    // With the data directory's signing key, as the service reads it, so the import's trailers are believed.
    const repo = await FlagRepository.open({
      gitdir: join(dataDir, 'repos/acme.git'),
      signingKey: await new FileCommitTrustStore(join(dataDir, 'state')).signingKey(),
    });
    try {
      return await fn(repo);
    } finally {
      await repo.close();
    }
  }

  const readMain = () =>
    withRepo(async (repo) => {
      const head = await repo.head();
      return { head, loaded: await repo.readState(), commit: head ? await repo.readCommit(head) : null };
    });

  /** What the service's kill does: rewrite the environment's kills.yaml in one commit. */
  const killCheckoutInProd = () =>
    withRepo((repo) =>
      repo.update(() => ({
        changes: [{ path: layout.killsFile('shop', 'prod'), content: PROD_KILLS }],
        meta: {
          action: 'kill',
          summary: 'kill checkout-v2 in prod',
          actor: { type: 'agent', name: 'ops-bot', keyPrefix: 'svc_agt_lC8YX7RM' },
          project: 'shop',
          flag: 'checkout-v2',
          environment: 'prod',
        },
        result: undefined,
      })),
    );

  const importSample = (...extra: string[]) => flagops(['import', 'flags', '--org', 'acme', '--data-dir', dataDir, ...extra]);

  it('commits the sample repository into a new organisation (--create), as one import commit', async () => {
    const result = await importSample('--actor', 'alice', '--create');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const [plan, done] = result.stdout.split(/(?=^imported )/m);
    expect(plan).toBe(
      'plan for organisation acme (no commit yet):\n' +
        'project shop: new, as in flags\n' +
        '  4 flags: checkout-v2, holiday-banner, max-cart-items, search-ranking\n' +
        '  no segments\n' +
        '  settings: id prj_5042d146667518a1; name "Shop"\n' +
        '  killed as in flags: search-ranking in staging\n',
    );
    expect(done).toMatch(
      /^imported 1 project\(s\), 4 flag\(s\) into acme: commit [0-9a-f]{40}\ncreated the repository of organisation acme; /,
    );

    const { loaded, commit } = await readMain();
    expect(loaded.issues).toEqual([]);
    expect([...loaded.state.projects.get('shop')!.flags.keys()]).toEqual([
      'checkout-v2',
      'holiday-banner',
      'max-cart-items',
      'search-ranking',
    ]);
    // A new project arrives with the kills its directory has.
    expect(Object.keys(loaded.state.projects.get('shop')!.kills.staging.kills)).toEqual(['search-ranking']);
    expect(commit!.flagops).toMatchObject({ action: 'import', project: 'shop', actor: { type: 'admin', name: 'alice' } });
  });

  describe('a data directory or organisation that does not exist', () => {
    it('is refused when --data-dir names no directory, which stays uncreated', async () => {
      const typo = join(dataDir, 'dta');
      const result = await flagops(['import', 'flags', '--org', 'acme', '--data-dir', typo]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `flagops import: there is no data directory ${typo}; check --data-dir (or FLAGOPS_DATA_DIR), or pass --create to start a new one; nothing was imported\n`,
      );
      expect(existsSync(typo)).toBe(false);
    });

    it('is refused when the organisation has no repository there, naming the ones it has', async () => {
      await importSample('--create');
      const result = await flagops(['import', 'flags', '--org', 'acne', '--data-dir', dataDir]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `organisation acne has no repository in ${dataDir} (organisations there: acme); check --org, or pass --create`,
      );
      expect(readdirSync(join(dataDir, 'repos'))).toEqual(['acme.git']);
    });

    it('is refused in a directory that is no data directory, which it leaves as it was', async () => {
      const result = await flagops(['import', 'flags', '--org', 'acme', '--data-dir', dataDir]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`organisation acme has no repository in ${dataDir} (it has no organisations yet)`);
      expect(readdirSync(dataDir)).toEqual([]);
    });

    it('is accepted for an organisation the service has keys for, before its repository exists', async () => {
      mkdirSync(join(dataDir, 'state'));
      writeFileSync(
        join(dataDir, 'state/keys.json'),
        JSON.stringify({ version: 1, organisations: [{ name: 'acme', createdAt: '2026-01-01T00:00:00.000Z' }], keys: [] }),
      );
      expect(await importSample()).toMatchObject({ code: 0, stderr: '' });
    });
  });

  describe('a project the organisation already has', () => {
    it('is not replaced without --replace: the import refuses, naming it, and commits nothing', async () => {
      await importSample('--create');
      const { head } = await readMain();
      const copy = sampleCopy();
      cleanups.push(copy.remove);
      unlinkSync(join(copy.dir, 'projects/shop/flags/holiday-banner.yaml'));
      for (const env of ['dev', 'staging', 'prod']) unlinkSync(join(copy.dir, 'projects/shop/environments', env, 'holiday-banner.yaml'));
      const result = await flagops(['import', copy.dir, '--org', 'acme', '--data-dir', dataDir]);
      expect(result).toMatchObject({
        code: 1,
        stdout: '',
        stderr:
          'flagops import: project shop already exists in organisation acme; pass --replace to replace it (its kills are kept); nothing was imported\n',
      });
      expect((await readMain()).head).toBe(head);
    });

    it('makes no commit with --replace when the repository already holds the same files', async () => {
      await importSample('--create');
      const { head } = await readMain();
      const again = await importSample('--replace');
      expect(again).toMatchObject({
        code: 0,
        stdout: `plan for organisation acme (main at ${head!.slice(0, 7)}): nothing to change\nnothing to import: acme already holds 1 project(s), 4 flag(s) as in flags\n`,
      });
      expect((await readMain()).head).toBe(head);
    });

    it('leaves files that differ only in comments, layout or version as they are: no commit, no version moves', async () => {
      await importSample('--create');
      const { head } = await readMain();
      const prodVersion = async () =>
        withRepo(async (repo) => (await repo.readServed()).state.projects.get('shop')!.flags.get('checkout-v2')!.environments.prod.version);
      const versionBefore = await prodVersion();
      const copy = sampleCopy();
      cleanups.push(copy.remove);
      const prodConfig = join(copy.dir, 'projects/shop/environments/prod/checkout-v2.yaml');
      writeFileSync(prodConfig, `# just a comment\n${readFileSync(prodConfig, 'utf8').replace('version: 12', 'version: 1')}`);
      const flagFile = join(copy.dir, 'projects/shop/flags/max-cart-items.yaml');
      writeFileSync(flagFile, readFileSync(flagFile, 'utf8').split('\n').reverse().join('\n'));
      const importCopy = (...extra: string[]) =>
        flagops(['import', copy.dir, '--org', 'acme', '--data-dir', dataDir, '--replace', ...extra]);

      const planned = `plan for organisation acme (main at ${head!.slice(0, 7)}): nothing to change\n`;
      expect(await importCopy('--dry-run')).toMatchObject({ code: 0, stdout: `${planned}dry run: nothing was imported\n` });
      expect(await importCopy()).toMatchObject({
        code: 0,
        stdout: `${planned}nothing to import: acme already holds 1 project(s), 4 flag(s) as in ${copy.dir}\n`,
      });
      expect((await readMain()).head).toBe(head);
      expect(await prodVersion()).toBe(versionBefore);

      // With a change beside them, only the changed file is written: the plan names every file the commit changes.
      const devConfig = join(copy.dir, 'projects/shop/environments/dev/checkout-v2.yaml');
      writeFileSync(devConfig, readFileSync(devConfig, 'utf8').replace(/rolloutPct: \d+/, 'rolloutPct: 77'));
      const changed = await importCopy();
      expect(changed.code).toBe(0);
      expect(changed.stdout).toContain('  changes:\n    shop/checkout-v2 dev: rolloutPct');
      const after = await readMain();
      const written = await withRepo((repo) => repo.changedPaths(after.head!));
      expect(written.map((p) => p.path)).toEqual(['projects/shop/environments/dev/checkout-v2.yaml']);
      expect(await prodVersion()).toBe(versionBefore);
    });

    it('is mirrored with --replace: a flag the directory no longer has is deleted', async () => {
      await importSample('--create');
      const copy = sampleCopy();
      cleanups.push(copy.remove);
      for (const path of ['flags', 'environments/dev', 'environments/staging', 'environments/prod'])
        unlinkSync(join(copy.dir, 'projects/shop', path, 'max-cart-items.yaml'));
      expect((await flagops(['import', copy.dir, '--org', 'acme', '--data-dir', dataDir, '--replace', '--yes'])).code).toBe(0);
      expect([...(await readMain()).loaded.state.projects.get('shop')!.flags.keys()]).not.toContain('max-cart-items');
    });

    it('keeps its kills with --replace: a kill is never lifted, and the directory’s kills.yaml is not applied', async () => {
      await importSample('--create');
      await killCheckoutInProd();
      const result = await importSample('--replace');
      // The directory's prod kills.yaml kills search-ranking instead; neither lifts nor adds anything.
      expect(result.stdout).toMatch(
        /: nothing to change\nnothing to import: acme already holds 1 project\(s\), 4 flag\(s\) as in flags\n$/,
      );

      const copy = sampleCopy();
      cleanups.push(copy.remove);
      writeFileSync(join(copy.dir, 'projects/shop/environments/prod/kills.yaml'), 'kills: {}\n');
      writeFileSync(
        join(copy.dir, 'projects/shop/flags/checkout-v2.yaml'),
        'key: checkout-v2\nname: Checkout v2 (imported)\nkind: boolean\ndefaultValue: false\narchivedAt: null\n',
      );
      const replaced = await flagops(['import', copy.dir, '--org', 'acme', '--data-dir', dataDir, '--replace']);
      expect(replaced.code).toBe(0);
      expect(replaced.stdout).toContain('kept the kills of shop as they were (an import never changes a kill)\n');
      const { loaded } = await readMain();
      const shop = loaded.state.projects.get('shop')!;
      expect(shop.flags.get('checkout-v2')!.meta.name).toBe('Checkout v2 (imported)');
      expect(shop.kills.prod.kills).toEqual({
        'checkout-v2': expect.objectContaining({ killedBy: 'svc_agt_lC8YX7RM', reason: 'error rate above 5%' }),
      });
      expect(Object.keys(shop.kills.staging.kills)).toEqual(['search-ranking']);
    });

    it('says with --replace which ids the directory changes, since API paths and sdk keys name them', async () => {
      await importSample('--create');
      const copy = sampleCopy();
      cleanups.push(copy.remove);
      writeFileSync(join(copy.dir, 'projects/shop/project.yaml'), 'id: prj_from_elsewhere\nname: Shop\nslug: shop\n');
      const result = await flagops(['import', copy.dir, '--org', 'acme', '--data-dir', dataDir, '--replace', '--yes']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(
        /\n {4}change setting id: prj_[0-9a-f]{16} → prj_from_elsewhere \(API paths and sdk keys naming the old id stop finding the project\)\n/,
      );
      expect(result.stdout).toMatch(
        /\nids now as in .+: project shop prj_[0-9a-f]{16} → prj_from_elsewhere; API paths and sdk keys that name an old id no longer find it/,
      );
    });

    it('refuses with --replace to delete a killed flag, naming it, and commits nothing', async () => {
      await importSample('--create');
      await killCheckoutInProd();
      const { head } = await readMain();
      const copy = sampleCopy();
      cleanups.push(copy.remove);
      unlinkSync(join(copy.dir, 'projects/shop/flags/checkout-v2.yaml'));
      for (const env of ['dev', 'staging', 'prod']) unlinkSync(join(copy.dir, 'projects/shop/environments', env, 'checkout-v2.yaml'));
      const result = await flagops(['import', copy.dir, '--org', 'acme', '--data-dir', dataDir, '--replace']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('flag checkout-v2 of project shop is killed in prod');
      expect(result.stderr).toContain('an import never lifts a kill: clear the kill first, or keep the flag; nothing was imported');
      expect((await readMain()).head).toBe(head);
    });
  });

  describe('its plan', () => {
    /** A copy of the sample whose files `edit` changes. */
    function editedSample(edit: (dir: string) => void): string {
      const copy = sampleCopy();
      cleanups.push(copy.remove);
      edit(copy.dir);
      return copy.dir;
    }
    const importDir = (dir: string, ...extra: string[]) => flagops(['import', dir, '--org', 'acme', '--data-dir', dataDir, ...extra]);
    const shop = async () => (await readMain()).loaded.state.projects.get('shop')!;

    /** Every file and folder of the data directory with its size and modification time. */
    function dataDirListing(): string[] {
      return (readdirSync(dataDir, { recursive: true }) as string[])
        .map((path) => {
          const s = statSync(join(dataDir, path));
          return `${path} ${s.size} ${s.mtimeMs}`;
        })
        .sort();
    }

    it('applies new flags and config changes without --yes, listing them as flagops diff words them', async () => {
      await importDir(
        editedSample((dir) => {
          unlinkSync(join(dir, 'projects/shop/flags/holiday-banner.yaml'));
          for (const env of ['dev', 'staging', 'prod']) unlinkSync(join(dir, 'projects/shop/environments', env, 'holiday-banner.yaml'));
        }),
        '--create',
      );
      const prod = join(SAMPLE, 'projects/shop/environments/prod/checkout-v2.yaml');
      const dir = editedSample((dir) =>
        writeFileSync(
          join(dir, 'projects/shop/environments/prod/checkout-v2.yaml'),
          readFileSync(prod, 'utf8').replace('rolloutPct: 10', 'rolloutPct: 50'),
        ),
      );
      const result = await importDir(dir, '--replace');
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(
        `project shop: replaced by the one in ${dir} (its kills are kept: search-ranking in staging)\n` +
          '  changes:\n' +
          '    shop/checkout-v2 prod: rolloutPct 10 → 50\n' +
          '    shop/holiday-banner: flag added (json)\n',
      );
      expect(result.stdout).not.toContain('needs --yes');
      expect((await shop()).flags.get('checkout-v2')!.environments.prod.rolloutPct).toBe(50);
    });

    it('needs --yes to archive a flag or change a project setting, and names both', async () => {
      await importSample('--create');
      const { head } = await readMain();
      const dir = editedSample((dir) => {
        writeFileSync(join(dir, 'projects/shop/project.yaml'), 'name: Shop (imported)\nslug: shop\n');
        const flag = join(dir, 'projects/shop/flags/max-cart-items.yaml');
        writeFileSync(flag, readFileSync(flag, 'utf8').replace('archivedAt: null', 'archivedAt: 2026-01-05T10:00:00Z'));
      });
      const result = await importDir(dir, '--replace');
      expect(result.code).toBe(3);
      expect(result.stdout).toContain(
        '  needs --yes:\n    change setting name: "Shop" → "Shop (imported)"\n    archive flag max-cart-items\n',
      );
      expect(result.stderr).toBe(
        'flagops import: this import needs --yes: it would change setting name of shop and archive flag shop/max-cart-items; ' +
          're-run with --yes to apply it, or with --dry-run to only see the plan; nothing was imported\n',
      );
      expect((await readMain()).head).toBe(head);

      expect((await importDir(dir, '--replace', '--yes')).code).toBe(0);
      expect((await shop()).project.name).toBe('Shop (imported)');
      expect((await shop()).flags.get('max-cart-items')!.meta.archivedAt).not.toBeNull();
    });

    it('needs --yes to delete a segment the directory lacks, and deletes it with --yes', async () => {
      await importDir(
        editedSample((dir) => {
          mkdirSync(join(dir, 'projects/shop/segments'));
          writeFileSync(
            join(dir, 'projects/shop/segments/beta-testers.yaml'),
            'key: beta-testers\nversion: 1\nuserIds: [u-1, u-2]\nconditions: []\n',
          );
        }),
        '--create',
      );
      const { head } = await readMain();
      const refused = await importSample('--replace');
      expect(refused.code).toBe(3);
      expect(refused.stdout).toContain('  needs --yes:\n    delete segment beta-testers\n');
      expect((await readMain()).head).toBe(head);

      expect((await importSample('--replace', '--yes')).code).toBe(0);
      expect([...((await shop()).segments?.keys() ?? [])]).toEqual([]);
    });

    it('needs --yes to delete a file with issues, whose content it cannot compare', async () => {
      await importSample('--create');
      pushEdit(join(dataDir, 'repos/acme.git'), (checkout) =>
        writeFileSync(join(checkout, 'projects/shop/flags/broken.yaml'), 'key: nope\n'),
      );
      const { head, loaded } = await readMain();
      expect(new Set(loaded.issues.map((issue) => issue.file))).toEqual(new Set(['projects/shop/flags/broken.yaml']));
      const refused = await importSample('--replace');
      expect(refused.code).toBe(3);
      expect(refused.stdout).toContain('    delete projects/shop/flags/broken.yaml, which has issues (what it holds is not compared)\n');
      expect((await readMain()).head).toBe(head);

      expect((await importSample('--replace', '--yes')).code).toBe(0);
      expect((await readMain()).loaded.issues).toEqual([]);
    });

    it('with --dry-run prints the plan and writes nothing to the data directory, exit 0', async () => {
      await importSample('--create');
      const { head } = await readMain();
      const before = dataDirListing();
      const result = await importDir(
        editedSample((dir) => {
          for (const path of ['flags', 'environments/dev', 'environments/staging', 'environments/prod'])
            unlinkSync(join(dir, 'projects/shop', path, 'max-cart-items.yaml'));
        }),
        '--replace',
        '--dry-run',
      );
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toContain(`plan for organisation acme (main at ${head!.slice(0, 7)}):\n`);
      expect(result.stdout).toContain('  needs --yes:\n    delete flag max-cart-items\n');
      expect(result.stdout).toMatch(/\ndry run: nothing was imported; without --dry-run this import needs --yes\n$/);
      // Before readMain, which (as the service does) makes sure the signing key exists and so touches state/.
      expect(dataDirListing()).toEqual(before);
      expect((await readMain()).head).toBe(head);
    });

    it('with --dry-run and --create creates neither the data directory nor the repository', async () => {
      const fresh = join(dataDir, 'fresh');
      const result = await flagops(['import', 'flags', '--org', 'acme', '--data-dir', fresh, '--create', '--dry-run']);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(/^plan for organisation acme \(a new repository\):\nproject shop: new, as in flags\n/);
      expect(result.stdout).toMatch(/\ndry run: nothing was imported\n$/);
      expect(existsSync(fresh)).toBe(false);
    });

    it('with --dry-run refuses what the import refuses: a project that exists, without --replace', async () => {
      await importSample('--create');
      const result = await importSample('--dry-run');
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toContain('project shop already exists in organisation acme; pass --replace');
    });

    it('is described in --help with --yes, --dry-run and the exit codes', async () => {
      const help = (await flagops(['import', '--help'])).stdout;
      expect(help).toContain('--yes ');
      expect(help).toContain('--dry-run ');
      expect(help).toContain('3 the plan needs --yes and nothing was written');
    });
  });

  it('refuses an invalid directory with its issues and writes nothing', async () => {
    const copy = sampleCopy();
    cleanups.push(copy.remove);
    writeFileSync(join(copy.dir, 'projects/shop/flags/checkout-v2.yaml'), 'key: checkout\n');
    const result = await flagops(['import', copy.dir, '--org', 'acme', '--data-dir', dataDir, '--create']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'projects/shop/flags/checkout-v2.yaml:1:6: /key: must equal the file name "checkout-v2" (found "checkout")',
    );
    expect(result.stderr).toContain('nothing was imported');
    await expect(FlagRepository.open({ gitdir: join(dataDir, 'repos/acme.git') })).rejects.toThrow(/not a git repository/);
  });

  it('refuses what a push is refused for, as flagops validate says: a file over 1 MiB and a symbolic link', async () => {
    const copy = sampleCopy();
    cleanups.push(copy.remove);
    const flag = join(copy.dir, 'projects/shop/flags/checkout-v2.yaml');
    writeFileSync(flag, readFileSync(flag, 'utf8').replace(/^description: .*$/m, `description: ${'x'.repeat(1024 * 1024)}`));
    symlinkSync('../../prod/checkout-v2.yaml', join(copy.dir, 'projects/shop/environments/dev/linked.yaml'));
    const result = await flagops(['import', copy.dir, '--org', 'acme', '--data-dir', dataDir, '--create']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('projects/shop/flags/checkout-v2.yaml: 1.0 MiB is over the limit of 1 MiB per file');
    expect(result.stdout).toContain('projects/shop/environments/dev/linked.yaml: symbolic links are not allowed');
    // Said once per file, not again by the file's own check.
    expect(result.stdout.match(/checkout-v2\.yaml/g)).toHaveLength(1);
    expect(result.stderr).toContain('nothing was imported');
    await expect(FlagRepository.open({ gitdir: join(dataDir, 'repos/acme.git') })).rejects.toThrow(/not a git repository/);
  });

  it('needs --org, and an organisation name that can be one', async () => {
    expect(await flagops(['import', 'flags', '--data-dir', dataDir])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--org is required'),
    });
    expect(await flagops(['import', 'flags', '--org', '../acme', '--data-dir', dataDir])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('is not an organisation name'),
    });
  });
});
