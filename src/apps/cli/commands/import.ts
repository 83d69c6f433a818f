import { mkdir, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { isOrgName } from '../../../foundations/auth/key-format.js';
import { FlagopsError } from '../../../foundations/errors/kinds.js';
import { silentLogger } from '../../../foundations/log/logger.js';
import { readRepositoryFiles } from '../../../foundations/repository/read-repository.js';
import { caseCollisionIssues, treeRefusals } from '../../../foundations/repository/tree-rules.js';
import { openControlState } from '../../../foundations/state/index.js';
import type { FlagRepository, OpenOptions } from '../../../foundations/storage/index.js';
import { type CliIo, type Command, EXIT, UsageError } from '../command.js';
import { confirmSummary, formatImportPlan } from '../format-import-plan.js';
import { type ImportPlan, needsConfirmation } from '../import-plan.js';
import { type ImportRemote, importRemote } from '../import-remote.js';
import { formatIssueLine } from '../issue-output.js';
import { ImportRefused, type ImportRequest, type PreparedImport, prepareImport } from '../prepare-import.js';
import { isDirectory, readRepositoryTree } from '../read-directory.js';

const help = `Usage: flagops import <dir> --org O [--data-dir D] [--actor NAME] [--replace] [--yes] [--dry-run] [--create]

Copies the projects of a flags repository directory (for example a checkout, or the sample in flags/)
into an organisation's repository in the service's data directory, as one commit. The directory is
validated first: with any issue, nothing is written and the issues are printed as by 'flagops validate'.

A project the organisation already has is replaced only with --replace; without it the import refuses,
naming the project, and writes nothing. A replaced project ends up as in <dir> (flags, segments and
settings <dir> lacks are deleted from it), except its kills: an import never lifts, adds or changes a
kill of a project that exists, so that project's kills.yaml files stay as they are, and a killed flag
cannot be deleted by an import (clear the kill first). A new project arrives as in <dir>, kills.yaml
included. Projects that <dir> does not contain are left as they are. Of a replaced project, only the files
whose content changes (and new ones) are written; a file that differs only in comments, layout or its
version stays as it is, so its version does not move and open proposals on it stay approvable. An import
whose plan is 'nothing to change' makes no commit.

Before writing, the import prints its plan against the organisation's main, per project: a new project's
flags, segments and kills; for a replaced project what changes, as 'flagops diff' words it, and under
"needs --yes" what it deletes or archives (flags, segments), the flags whose id changes, and the project
settings it changes (project.yaml: id, name, requireApproval), old → new. Those need --yes: without it
the import prints the plan, says what needs confirming, writes nothing and exits 3. Adding flags and
segments and changing their configs need no --yes. With --dry-run it prints the plan, writes nothing
(not even a missing repository) and exits 0.

Every flag the import changes is in the audit trail (GET /api/v1/audit) as its own entry: flag_create,
flag_update, config_update, flag_delete, project_create..., by the --actor, with the message "import ...".

Options:
  --org O              the organisation (required); its repository is <data-dir>/repos/<O>.git
  --data-dir D         the service's data directory (default: $FLAGOPS_DATA_DIR, else ./data)
  --actor NAME         the author recorded in the commit and the audit trail (default: $USER)
  --replace            replace projects the organisation already has
  --yes                apply a plan that deletes or archives flags or segments, changes flag ids or
                       changes project settings (without it such an import writes nothing, exit 3)
  --dry-run            print the plan and write nothing
  --create             create the data directory or the organisation's repository if missing (without
                       it, a mistyped --data-dir or --org is refused instead of starting a new one)
  -h, --help           show this help

Exit codes: 0 imported (or, with --dry-run, planned), 1 refused (issues in <dir>, a missing data
directory or organisation, an existing project without --replace, a killed flag <dir> lacks), 2 the
command line is wrong, 3 the plan needs --yes and nothing was written.

Run it while the server is stopped, or against a running server's data directory: commits use the
same compare-and-swap on main as the server, and the server picks up the new commit. A running
server serves an organisation that has keys (FLAGOPS_BOOTSTRAP_KEYS or its admin keys).

In remote mode, run it with the server's FLAGOPS_GIT_REMOTE (and FLAGOPS_GIT_REMOTE_ORG,
FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS): the commit is pushed to the remote's main before main moves, as the
server's changes are. When the remote cannot be reached or refuses it, the import is refused (exit 1)
and nothing changes; without FLAGOPS_GIT_REMOTE, an organisation that follows a remote is refused.
`;

/** Why the data directory or the organisation cannot be imported into without --create; null when they exist. */
async function missingTarget(dataDir: string, org: string, databaseUrl: string | undefined): Promise<string | null> {
  if (!(await isDirectory(dataDir))) {
    return `there is no data directory ${dataDir}; check --data-dir (or FLAGOPS_DATA_DIR), or pass --create to start a new one`;
  }
  if (await isDirectory(join(dataDir, 'repos', `${org}.git`))) return null;
  const state = await openControlState({ dataDir, databaseUrl, create: false }).catch(() => null);
  const keys = await state?.keys.list().catch(() => null);
  await state?.close();
  if (keys?.organisations.some((o) => o.name === org)) return null;
  const known = (await readdir(join(dataDir, 'repos')).catch(() => [] as string[]))
    .filter((n) => n.endsWith('.git'))
    .map((n) => n.slice(0, -4));
  const list = known.length > 0 ? `organisations there: ${known.sort().join(', ')}` : 'it has no organisations yet';
  return `organisation ${org} has no repository in ${dataDir} (${list}); check --org, or pass --create to create it`;
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
      yes: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
    },
  });
  if (positionals.length !== 1) throw new UsageError('expected one directory to import');
  const org = values.org;
  if (!org) throw new UsageError('--org is required');
  if (!isOrgName(org))
    throw new UsageError(`--org ${JSON.stringify(org)} is not an organisation name (lowercase letters, digits, "_" and "-")`);
  const dir = positionals[0];
  const absolute = resolve(io.cwd, dir);
  if (!(await isDirectory(absolute))) {
    io.stderr(`flagops import: ${dir} is not a directory that can be read; nothing was written\n`);
    return EXIT.failed;
  }

  const tree = await readRepositoryTree(absolute);
  if (!tree) {
    io.stderr(`flagops import: ${dir} has no projects/ folder; is it the root of a flags repository?\n`);
    return EXIT.failed;
  }
  // The rules a push is held to, as `flagops validate` checks them: links, submodules, sizes, letter case.
  const refused = [...treeRefusals(tree.entries), ...caseCollisionIssues(tree.entries.map((entry) => entry.path))];
  const read = readRepositoryFiles(tree.files, null, { locate: true });
  const { state } = read;
  const refusedFiles = new Set(refused.map((issue) => issue.file));
  const issues = [...refused, ...read.issues.filter((issue) => !refusedFiles.has(issue.file))];
  if (issues.length > 0) {
    for (const issue of issues) io.stdout(`${formatIssueLine(issue, dir, 'text')}\n`);
    io.stderr(`flagops import: ${dir} has ${issues.length} issue(s); nothing was imported\n`);
    return EXIT.failed;
  }

  const dataDir = resolve(io.cwd, values['data-dir'] ?? (io.env.FLAGOPS_DATA_DIR || './data'));
  const missing = await missingTarget(dataDir, org, io.env.FLAGOPS_DATABASE_URL || undefined);
  if (missing && !values.create) {
    io.stderr(`flagops import: ${missing}; nothing was imported\n`);
    return EXIT.failed;
  }
  const request: ImportRequest = { org, dir, files: tree.files, imported: state, replace: values.replace };
  try {
    const gitdir = join(dataDir, 'repos', `${org}.git`);
    if (values['dry-run']) return await dryRun(request, gitdir, io);
    const remote = await importRemote(gitdir, org, io.env);
    // Owner-only, as the service creates it: it will hold credentials.
    if (missing) await mkdir(dataDir, { recursive: true, mode: 0o700 });
    return await commitImport(request, { dataDir, created: missing !== null, yes: values.yes, actor: values.actor, remote }, io);
  } catch (err) {
    // The git remote refused the import, could not be reached or did not answer (remote mode): main did not move.
    if (!(err instanceof ImportRefused || err instanceof FlagopsError)) throw err;
    io.stderr(`flagops import: ${err.message.replace(/\s*\n\s*/g, ' ').trim()}; nothing was imported\n`);
    return EXIT.failed;
  }
}

/** Plans against main as it is, read without writing anything (not even the repository, when it is missing). */
async function dryRun(request: ImportRequest, gitdir: string, io: CliIo): Promise<number> {
  const { FlagRepository } = await import('../../../foundations/storage/index.js');
  const repo = (await isDirectory(gitdir)) ? await FlagRepository.open({ gitdir, parseCache: false }) : null;
  try {
    const head = repo ? await repo.head() : null;
    const current = repo ? (await repo.readState(head)).state : { commit: null, projects: new Map() };
    const { plan } = await prepareImport(request, repo, current, head);
    io.stdout(formatImportPlan(plan, request.dir));
    const then = needsConfirmation(plan) ? '; without --dry-run this import needs --yes' : '';
    io.stdout(`dry run: nothing was imported${then}\n`);
    return EXIT.ok;
  } finally {
    await repo?.close();
  }
}

/** A commit adding more than this is pushed by `git push`, which deltas against what the host has. */
const MAX_PUSHED_BYTES = 8 * 1024 * 1024;

/** Thrown out of the write function when the plan needs --yes and it was not given: nothing is committed. */
class NeedsConfirmation extends Error {
  constructor(readonly plan: ImportPlan) {
    super('the import needs --yes');
  }
}

async function commitImport(
  request: ImportRequest,
  options: { dataDir: string; created: boolean; yes: boolean; actor: string | undefined; remote: ImportRemote | null },
  io: CliIo,
): Promise<number> {
  const { org, dir, imported } = request;
  const { RepositoryRegistry } = await import('../../../foundations/storage/index.js');
  // The installation's state, where the service keeps it: commits are signed with its key (a database's, with
  // FLAGOPS_DATABASE_URL), so the service believes what they say.
  const state = await openControlState({ dataDir: options.dataDir, databaseUrl: io.env.FLAGOPS_DATABASE_URL || undefined });
  // The plan of the attempt under way: what the commit the remote takes holds.
  const attempt: { prepared?: PreparedImport } = {};
  const remote =
    options.remote &&
    (await publishingTo(
      options.remote,
      join(options.dataDir, 'repos', `${org}.git`),
      (): Promise<FlagRepository> => registry.get(org),
      () => attempt.prepared,
    ));
  const registry = new RepositoryRegistry({
    dataDir: options.dataDir,
    trust: state.commitTrust,
    watch: false,
    ...(remote ? { repository: { publish: remote.publish } } : {}),
  });
  try {
    const repo = await registry.get(org);
    const slugs = [...imported.projects.keys()];
    // The plan is made on the head the commit goes on: when main moves meanwhile, it is made again.
    const update = await repo
      .update(async (current, head) => {
        const prepared = await prepareImport(request, repo, current, head);
        attempt.prepared = prepared;
        if (!options.yes && needsConfirmation(prepared.plan)) throw new NeedsConfirmation(prepared.plan);
        return {
          changes: prepared.changes,
          meta: {
            action: 'import',
            summary: `import ${slugs.join(', ')} from ${dir}`,
            actor: { type: 'admin', name: options.actor ?? io.env.USER ?? 'flagops import' },
            ...(slugs.length === 1 ? { project: slugs[0] } : {}),
          },
          result: prepared,
        };
      })
      .catch((err: unknown) => {
        // Remote mode: the git remote took the import's commit, and only main here could not follow (a running
        // service moved it meanwhile, committing a kill the remote has not taken yet, say). The remote is the source
        // of truth: the import is made, and the service takes it from there.
        const landed = remote ? remote.landed() : null;
        if (landed !== null && !(err instanceof NeedsConfirmation)) return { commit: landed.commit, committed: true, result: landed.plan };
        if (!(err instanceof NeedsConfirmation)) throw err;
        io.stdout(formatImportPlan(err.plan, dir));
        io.stderr(
          `flagops import: this import needs --yes: it would ${confirmSummary(err.plan)}; re-run with --yes to apply it, or with --dry-run to only see the plan; nothing was imported\n`,
        );
        return null;
      });
    if (update === null) return EXIT.unconfirmed;
    const { plan, replaced } = update.result;
    io.stdout(formatImportPlan(plan, dir));
    let flags = 0;
    for (const project of imported.projects.values()) flags += project.flags.size;
    const what = `${slugs.length} project(s), ${flags} flag(s)`;
    io.stdout(
      update.committed
        ? `imported ${what} into ${org}: commit ${update.commit}\n`
        : `nothing to import: ${org} already holds ${what} as in ${dir}\n`,
    );
    if (update.committed && replaced.length > 0)
      io.stdout(`kept the kills of ${replaced.join(', ')} as they were (an import never changes a kill)\n`);
    const newIds = changedIds(plan);
    if (update.committed && newIds.length > 0) {
      io.stdout(
        `ids now as in ${dir}: ${newIds.join(', ')}; API paths and sdk keys that name an old id no longer find it (create new sdk keys)\n`,
      );
    }
    if (options.created) {
      io.stdout(
        `created the repository of organisation ${org}; a service serves it once the organisation has a key (FLAGOPS_BOOTSTRAP_KEYS=${org}:svc_adm_<32 random characters>)\n`,
      );
    }
    return EXIT.ok;
  } finally {
    remote?.close();
    await registry.closeAll();
    await state.close();
  }
}

/**
 * Remote mode: the store's `publish`, as the service's changes have it. The import's commit is pushed to the
 * remote's main before main moves here; when the remote moved, main is brought up to it and the import planned
 * again on top; when it cannot be reached or refuses, the update throws and main stays as it was. `landed()`
 * names the commit the remote took, made whatever main here does after.
 */
async function publishingTo(
  remote: ImportRemote,
  gitdir: string,
  repo: () => Promise<FlagRepository>,
  currentPlan: () => PreparedImport | undefined,
): Promise<{
  publish: NonNullable<OpenOptions['publish']>;
  /** The commit the remote took last, with its plan; null while it took none. */
  landed(): { commit: string; plan: PreparedImport } | null;
  close(): void;
}> {
  const { PUSH_TIMEOUT_SECONDS, RemoteSync } = await import('../../../features/remote/remote-sync.js');
  const timeoutMs = (remote.pushTimeoutSeconds ?? PUSH_TIMEOUT_SECONDS) * 1000;
  const packOf = async (commit: string) => (await repo()).packAddedBy(commit, MAX_PUSHED_BYTES);
  const sync = new RemoteSync(gitdir, remote.url, silentLogger, undefined, undefined, undefined, timeoutMs, packOf);
  let landed: { commit: string; plan: PreparedImport } | null = null;
  return {
    publish: async (_gitdir: string, commit: string, parent: string | null, action: string) => {
      const published = await sync.publish(commit, parent, action);
      if (published) {
        const plan = currentPlan();
        landed = plan === undefined ? null : { commit, plan };
      }
      return published;
    },
    landed: () => landed,
    close: () => sync.close(),
  };
}

/** `project shop prj_a → prj_b`, `flag shop/x flg_a → flg_b`: the ids replaced projects take from the directory. */
function changedIds(plan: ImportPlan): string[] {
  return plan.projects.flatMap((project) =>
    project.confirm.flatMap((item) => {
      if (item.type === 'setting_changed' && item.field === 'id') return [`project ${project.slug} ${item.before} → ${item.after}`];
      if (item.type === 'flag_id_changed') return [`flag ${project.slug}/${item.flag} ${item.before} → ${item.after}`];
      return [];
    }),
  );
}

export const importCommand: Command = { name: 'import', summary: "import a flags directory into an organisation's repository", help, run };
