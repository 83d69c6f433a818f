import { isAbsolute, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { readRepositoryFiles } from '../../../foundations/repository/read-repository.js';
import { type CliIo, type Command, EXIT, UsageError } from '../command.js';
import { isDirectory, readRepositoryDirectory } from '../read-directory.js';
import { findRefs, MAX_FILE_BYTES } from '../refs/find-refs.js';
import { flagCatalog } from '../refs/flag-catalog.js';
import { offlineStatusOf, type StatusOf } from '../refs/flag-status.js';
import { formatRefs } from '../refs/format-refs.js';
import { HealthUnavailableError, serviceStatusOf } from '../refs/service-health.js';

const FORMATS = ['text', 'json'] as const;
type Format = (typeof FORMATS)[number];

const help = `Usage: flagops refs [--dir <source tree>] [--flags <flags repository>] [--project <slug>]
                    [--format text|json] [--fail-on-unknown] [--health <control plane URL>]

Finds where source code uses each flag: every quoted string literal ('…', "…", \`…\`) that is a flag's key is a
reference, reported as file (relative to --dir) and line. Keys passed as a literal to an SDK evaluation call
(the flagops SDKs for JavaScript/TypeScript, Go and Python, and OpenFeature's clients) that no flag has are
unknown keys: a typo, or a flag that was deleted.

The scan skips .git, node_modules and vendored directories (vendor, third_party, bower_components, .venv),
what .gitignore files ignore, symbolic links, binary files and files over ${MAX_FILE_BYTES / 1024 / 1024} MiB.

A flag's status: with --health, the service's flag health (active, potentially_stale or stale, from the
served history and the evaluation counts); without it, what the checkout alone tells: stale when the flag is
archived or its lifecycle.expiresAt has passed, otherwise active. Every flag that is not archived is listed,
referenced or not; an archived flag only while something references it.

Options:
  --dir dir            the source tree to scan (default: the current directory)
  --flags dir          a checkout of the flags repository (default: the current directory)
  --project slug       only this project's flags (default: every project's)
  --format text        per flag, its status and references as file:line, then unknown keys (default)
  --format json        { flags: [ { key, status, references: [ { file, line } ] } ], unknownKeys: [ { key, file, line } ] }
  --fail-on-unknown    exit code 1 when there is an unknown key (for pull-request CI)
  --health url         take each flag's status from this control plane's flag health, read with the key
                       in FLAGOPS_API_KEY (any key that may read the project: admin or agent)
  -h, --help           show this help

Exit code 0 when scanned, 1 with --fail-on-unknown and an unknown key, or when the flags repository, the
project or (with --health) the flag health cannot be read; 2 when the command line is wrong.
`;

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      dir: { type: 'string', default: '.' },
      flags: { type: 'string', default: '.' },
      project: { type: 'string' },
      format: { type: 'string', default: 'text' },
      'fail-on-unknown': { type: 'boolean', default: false },
      health: { type: 'string' },
    },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}; the source tree is --dir`);
  const format = values.format as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}`);
  const dir = resolve(io.cwd, values.dir);
  if (!(await isDirectory(dir))) throw new UsageError(`--dir ${values.dir} is not a directory`);
  const flagsDir = resolve(io.cwd, values.flags);
  const apiKey = io.env.FLAGOPS_API_KEY;
  if (values.health !== undefined && !apiKey)
    throw new UsageError('--health reads the flag health with the key in FLAGOPS_API_KEY; set it');
  if (values.health !== undefined && !/^https?:\/\/[^/]/.test(values.health))
    throw new UsageError(
      `--health must be the control plane's http(s) origin, such as http://127.0.0.1:4000 (got ${JSON.stringify(values.health)})`,
    );

  const files = (await isDirectory(flagsDir)) ? await readRepositoryDirectory(flagsDir) : undefined;
  if (!files) {
    io.stderr(`flagops refs: ${values.flags} has no projects/ folder; is it the root of a flags repository? (--flags)\n`);
    return EXIT.failed;
  }
  const { state, issues } = readRepositoryFiles(files, null);
  const project = values.project;
  if (project !== undefined && !files.some((f) => f.path.startsWith(`projects/${project}/`))) {
    io.stderr(`flagops refs: ${values.flags} has no project ${project}\n`);
    return EXIT.failed;
  }
  const mine = issues.filter((issue) => project === undefined || issue.file?.startsWith(`projects/${project}/`));
  if (mine.length > 0)
    io.stderr(
      `flagops refs: the flags repository has ${mine.length} issue(s) ('flagops validate' names them); a flag whose files have one is taken as active\n`,
    );

  const catalog = flagCatalog(
    state,
    files.map((f) => f.path),
    project,
  );
  // The one place a flag's status comes from: the service's flag health, or what the repository alone tells.
  let statusOf: StatusOf;
  if (values.health === undefined) statusOf = offlineStatusOf(catalog.files, Date.now());
  else {
    const archived = new Set(catalog.files.filter((f) => f.archivedAt !== null).map((f) => f.key));
    try {
      statusOf = await serviceStatusOf({ url: values.health, key: apiKey! }, project, archived);
    } catch (err) {
      if (!(err instanceof HealthUnavailableError)) throw err;
      io.stderr(`flagops refs: no flag health: ${err.message}\n`);
      return EXIT.failed;
    }
  }
  const scan = findRefs({ dir, catalog, statusOf, exclude: flagFilesInside(dir, flagsDir) });

  io.stdout(format === 'json' ? `${JSON.stringify(scan.report, null, 2)}\n` : formatRefs(scan));
  return values['fail-on-unknown'] && scan.report.unknownKeys.length > 0 ? EXIT.failed : EXIT.ok;
}

/** The flags repository's projects/ when it lies inside the scanned tree: its YAML names every key, and is not code. */
function flagFilesInside(dir: string, flagsDir: string): ReadonlySet<string> {
  const inside = relative(dir, resolve(flagsDir, 'projects'));
  if (inside.startsWith('..') || isAbsolute(inside)) return new Set();
  return new Set([inside.split(sep).join('/')]);
}

export const refsCommand: Command = {
  name: 'refs',
  summary: 'find where source code uses each flag, and unknown keys passed to SDK calls',
  help,
  run,
};
