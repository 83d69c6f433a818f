import { mkdir, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ENVIRONMENTS, type ProjectState, type RepositoryState } from '@flagops/core';
import { KEY_FILE, readKeyFile } from '../../auth/key-file.js';
import { isOrgName } from '../../auth/key-format.js';
import { classifyPath, layout } from '../../repository/layout.js';
import { parseRepositoryFile } from '../../repository/parse-file.js';
import { readRepositoryFiles } from '../../repository/read-repository.js';
import type { FileChange, FlagRepository } from '../../storage/index.js';
import { type CliIo, type Command, EXIT, UsageError } from '../command.js';
import { formatIssueLine } from '../issue-output.js';
import { readRepositoryDirectory } from '../read-directory.js';

const help = `Usage: flagops import <dir> --org O [--data-dir D] [--actor NAME] [--replace] [--create]

Copies the projects of a flags repository directory (for example a checkout, or the sample in flags/)
into an organisation's repository in the service's data directory, as one commit. The directory is
validated first: with any issue, nothing is written and the issues are printed as by 'flagops validate'.

A project the organisation already has is replaced only with --replace; without it the import refuses,
naming the project, and writes nothing. A replaced project ends up as in <dir> (files <dir> lacks are
deleted from it), except its kills: an import never lifts, adds or changes a kill of a project that
exists, so that project's kills.yaml files stay as they are, and a killed flag cannot be deleted by an
import (clear the kill first). A new project arrives as in <dir>, kills.yaml included. Projects that
<dir> does not contain are left as they are.

Every flag the import changes is in the audit trail (GET /api/v1/audit) as its own entry: flag_create,
flag_update, config_update, flag_delete, project_create..., by the --actor, with the message "import ...".

Options:
  --org O              the organisation (required); its repository is <data-dir>/repos/<O>.git
  --data-dir D         the service's data directory (default: $FLAGOPS_DATA_DIR, else ./data)
  --actor NAME         the author recorded in the commit and the audit trail (default: $USER)
  --replace            replace projects the organisation already has
  --create             create the data directory or the organisation's repository if missing (without
                       it, a mistyped --data-dir or --org is refused instead of starting a new one)
  -h, --help           show this help

Run it while the server is stopped, or against a running server's data directory: commits use the
same compare-and-swap on main as the server, and the server picks up the new commit. A running
server serves an organisation that has keys (FLAGOPS_BOOTSTRAP_KEYS or its admin keys).
`;

/** Stops the import with a message for the operator; nothing was committed. */
class ImportRefused extends Error {}

/** The paths of a project the current state knows, kills files excluded, so that files the import lacks are deleted. */
function replacedPaths(state: RepositoryState, slug: string): string[] {
  const project = state.projects.get(slug);
  const paths = [layout.projectFile(slug)];
  for (const key of project?.flags.keys() ?? []) {
    paths.push(layout.flagFile(slug, key), ...ENVIRONMENTS.map((env) => layout.configFile(slug, env, key)));
  }
  return paths;
}

/** `project shop prj_a → prj_b`, `flag shop/x flg_a → flg_b`: the ids a replaced project takes from the directory. */
function changedIds(current: RepositoryState, slug: string, imported: ProjectState): string[] {
  const before = current.projects.get(slug);
  if (!before) return [];
  const changed = before.project.id === imported.project.id ? [] : [`project ${slug} ${before.project.id} → ${imported.project.id}`];
  for (const [key, flag] of imported.flags) {
    const old = before.flags.get(key);
    if (old && old.meta.id !== flag.meta.id) changed.push(`flag ${slug}/${key} ${old.meta.id} → ${flag.meta.id}`);
  }
  return changed;
}

/** The flags an existing project's kills.yaml files name, per environment, as committed at `head`. */
async function killedFlags(repo: FlagRepository, head: string, slug: string): Promise<Array<{ env: string; flag: string }>> {
  const killed: Array<{ env: string; flag: string }> = [];
  for (const env of ENVIRONMENTS) {
    const path = layout.killsFile(slug, env);
    const oid = await repo.treeOid(head, path);
    if (oid === null) continue;
    const { file } = parseRepositoryFile(path, await repo.readBlob(oid));
    // An unreadable kills.yaml is kept as it is; the store then refuses a commit whose kills name missing flags.
    if (file?.kind === 'kills') for (const flag of Object.keys(file.value.kills)) killed.push({ env, flag });
  }
  return killed;
}

/** Why the data directory or the organisation cannot be imported into without --create; null when they exist. */
async function missingTarget(dataDir: string, org: string): Promise<string | null> {
  if (!(await isDirectory(dataDir))) {
    return `there is no data directory ${dataDir}; check --data-dir (or FLAGOPS_DATA_DIR), or pass --create to start a new one`;
  }
  if (await isDirectory(join(dataDir, 'repos', `${org}.git`))) return null;
  const keyFile = await readKeyFile(join(dataDir, 'state', KEY_FILE)).catch(() => null);
  if (keyFile?.organisations.some((o) => o.name === org)) return null;
  const known = (await readdir(join(dataDir, 'repos')).catch(() => [] as string[]))
    .filter((n) => n.endsWith('.git'))
    .map((n) => n.slice(0, -4));
  const list = known.length > 0 ? `organisations there: ${known.sort().join(', ')}` : 'it has no organisations yet';
  return `organisation ${org} has no repository in ${dataDir} (${list}); check --org, or pass --create to create it`;
}

function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      org: { type: 'string' },
      'data-dir': { type: 'string' },
      actor: { type: 'string' },
      replace: { type: 'boolean', default: false },
      create: { type: 'boolean', default: false },
    },
  });
  if (positionals.length !== 1) throw new UsageError('expected one directory to import');
  const org = values.org;
  if (!org) throw new UsageError('--org is required');
  if (!isOrgName(org))
    throw new UsageError(`--org ${JSON.stringify(org)} is not an organisation name (lowercase letters, digits, "_" and "-")`);
  const dir = positionals[0];
  const absolute = resolve(io.cwd, dir);
  if (!(await isDirectory(absolute))) throw new UsageError(`${dir} is not a directory`);

  const files = await readRepositoryDirectory(absolute);
  if (!files) {
    io.stderr(`flagops import: ${dir} has no projects/ folder; is it the root of a flags repository?\n`);
    return EXIT.failed;
  }
  const { state, issues } = readRepositoryFiles(files, null);
  if (issues.length > 0) {
    for (const issue of issues) io.stdout(`${formatIssueLine(issue, dir, 'text')}\n`);
    io.stderr(`flagops import: ${dir} has ${issues.length} issue(s); nothing was imported\n`);
    return EXIT.failed;
  }

  const dataDir = resolve(io.cwd, values['data-dir'] ?? (io.env.FLAGOPS_DATA_DIR || './data'));
  const missing = await missingTarget(dataDir, org);
  if (missing && !values.create) {
    io.stderr(`flagops import: ${missing}; nothing was imported\n`);
    return EXIT.failed;
  }
  // Owner-only, as the service creates it: it will hold credentials.
  if (missing) await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const { RepositoryRegistry } = await import('../../storage/index.js');
  const registry = new RepositoryRegistry({ dataDir, watch: false });
  try {
    const repo = await registry.get(org);
    const slugs = [...state.projects.keys()];
    const replaced: string[] = [];
    const newIds: string[] = [];
    const update = await repo.update(async (current, head) => {
      replaced.length = 0;
      newIds.length = 0;
      const changes = new Map<string, FileChange>();
      // Broken files of an imported project are not in `current`; the issues name them.
      const broken = head === null ? [] : (await repo.readState(head)).issues.map((issue) => issue.file ?? '');
      for (const slug of slugs) {
        const exists = head !== null && (await repo.treeOid(head, layout.projectDir(slug))) !== null;
        if (!exists) continue;
        if (!values.replace)
          throw new ImportRefused(
            `project ${slug} already exists in organisation ${org}; pass --replace to replace it (its kills are kept)`,
          );
        replaced.push(slug);
        const imported = state.projects.get(slug)!;
        newIds.push(...changedIds(current, slug, imported));
        for (const { env, flag } of await killedFlags(repo, head, slug)) {
          if (!imported.flags.has(flag)) {
            throw new ImportRefused(
              `flag ${flag} of project ${slug} is killed in ${env} and ${dir} does not have it; an import never lifts a kill: clear the kill first, or keep the flag`,
            );
          }
        }
        const inProject = (p: string) => p.startsWith(`${layout.projectDir(slug)}/`) && classifyPath(p).kind !== 'kills';
        for (const path of [...replacedPaths(current, slug), ...broken.filter(inProject)]) changes.set(path, { path, content: null });
      }
      for (const file of files) {
        const where = classifyPath(file.path);
        if (where.kind === 'kills' && replaced.includes(where.project)) continue; // an existing project keeps its kills
        changes.set(file.path, { path: file.path, content: file.text });
      }
      return {
        changes: [...changes.values()],
        meta: {
          action: 'import',
          summary: `import ${slugs.join(', ')} from ${dir}`,
          actor: { type: 'admin', name: values.actor ?? io.env.USER ?? 'flagops import' },
          ...(slugs.length === 1 ? { project: slugs[0] } : {}),
        },
        result: undefined,
      };
    });
    let flags = 0;
    for (const project of state.projects.values()) flags += project.flags.size;
    const what = `${slugs.length} project(s), ${flags} flag(s)`;
    io.stdout(
      update.committed
        ? `imported ${what} into ${org}: commit ${update.commit}\n`
        : `nothing to import: ${org} already holds ${what} as in ${dir}\n`,
    );
    if (update.committed && replaced.length > 0)
      io.stdout(`kept the kills of ${replaced.join(', ')} as they were (an import never changes a kill)\n`);
    if (update.committed && newIds.length > 0) {
      io.stdout(
        `ids now as in ${dir}: ${newIds.join(', ')}; API paths and sdk keys that name an old id no longer find it (create new sdk keys)\n`,
      );
    }
    if (missing) {
      io.stdout(
        `created the repository of organisation ${org}; a service serves it once the organisation has a key (FLAGOPS_BOOTSTRAP_KEYS=${org}:svc_adm_<32 random characters>)\n`,
      );
    }
    return EXIT.ok;
  } catch (err) {
    if (!(err instanceof ImportRefused)) throw err;
    io.stderr(`flagops import: ${err.message}; nothing was imported\n`);
    return EXIT.failed;
  } finally {
    await registry.closeAll();
  }
}

export const importCommand: Command = { name: 'import', summary: "import a flags directory into an organisation's repository", help, run };
