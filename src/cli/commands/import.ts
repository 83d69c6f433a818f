import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ENVIRONMENTS } from '../../model/environments.js';
import type { RepositoryState } from '../../model/types.js';
import { layout } from '../../repository/layout.js';
import { readRepositoryFiles } from '../../repository/read-repository.js';
import type { FileChange } from '../../storage/index.js';
import { type Command, UsageError } from '../command.js';
import { type CliIo, EXIT } from '../io.js';
import { formatIssueLine } from '../issue-output.js';
import { readRepositoryDirectory } from '../read-directory.js';

const help = `Usage: flagops import <dir> --org O [--data-dir D] [--actor NAME]

Copies the projects of a flags repository directory (for example a checkout, or the sample in flags/)
into an organisation's repository in the service's data directory, as one commit with action "import".
Each imported project ends up exactly as in <dir> (files <dir> lacks are deleted from it); projects that
<dir> does not contain are left as they are. The directory is validated first: with any issue, nothing
is written and the issues are printed as by 'flagops validate'.

Options:
  --org O              the organisation (required); its repository is <data-dir>/repos/<O>.git
  --data-dir D         the service's data directory (default: $FLAGOPS_DATA_DIR, else ./data)
  --actor NAME         the author recorded in the commit and the audit trail (default: $USER)
  -h, --help           show this help

Run it while the server is stopped, or against a running server's data directory: commits use the
same compare-and-swap on main as the server, and the server picks up the new commit.
`;

/** Every path of a project the current state knows, so that files the import lacks are deleted. */
function projectPaths(state: RepositoryState, slug: string): string[] {
  const project = state.projects.get(slug);
  const paths = [layout.projectFile(slug), ...ENVIRONMENTS.map((env) => layout.killsFile(slug, env))];
  for (const key of project?.flags.keys() ?? []) {
    paths.push(layout.flagFile(slug, key), ...ENVIRONMENTS.map((env) => layout.configFile(slug, env, key)));
  }
  return paths;
}

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { org: { type: 'string' }, 'data-dir': { type: 'string' }, actor: { type: 'string' } },
  });
  if (positionals.length !== 1) throw new UsageError('expected one directory to import');
  if (!values.org) throw new UsageError('--org is required');
  const dir = positionals[0];
  const absolute = resolve(io.cwd, dir);
  if (!(await stat(absolute).then((s) => s.isDirectory(), () => false))) throw new UsageError(`${dir} is not a directory`);

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
  const { RepositoryRegistry } = await import('../../storage/index.js');
  const registry = new RepositoryRegistry({ dataDir, watch: false });
  try {
    const repo = await registry.get(values.org);
    const slugs = [...state.projects.keys()];
    const update = await repo.update(async (current, head) => {
      const changes = new Map<string, FileChange>();
      // Broken files of an imported project are not in `current`; the issues name them.
      const broken = head === null ? [] : (await repo.readState(head)).issues.map((issue) => issue.file ?? '');
      for (const slug of slugs) {
        for (const path of [...projectPaths(current, slug), ...broken.filter((p) => p.startsWith(`${layout.projectDir(slug)}/`))]) {
          changes.set(path, { path, content: null });
        }
      }
      for (const file of files) changes.set(file.path, { path: file.path, content: file.text });
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
    io.stdout(update.committed ? `imported ${what} into ${values.org}: commit ${update.commit}\n` : `nothing to import: ${values.org} already holds ${what} as in ${dir}\n`);
    return EXIT.ok;
  } finally {
    await registry.closeAll();
  }
}

export const importCommand: Command = { name: 'import', summary: "import a flags directory into an organisation's repository", help, run };
