import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { incumbentsAt, readRepositoryFiles } from '../../../foundations/repository/read-repository.js';
import { idChangeIssue } from '../../../foundations/repository/stable-ids.js';
import { caseCollisionIssues, treeRefusals } from '../../../foundations/repository/tree-rules.js';
import type { ValidationIssue } from '../../../foundations/validation/issue.js';
import { type CliIo, type Command, EXIT, UsageError } from '../command.js';
import { formatIssueLine, ISSUE_FORMATS, type IssueFormat } from '../issue-output.js';
import { readRepositoryTree } from '../read-directory.js';

const help = `Usage: flagops validate [dir] [--format text|github] [--base rev]

Checks a checked-out flags repository (its projects/ tree) the way the server checks a push: no symbolic
link, submodule or file over 1 MiB, no two paths differing only in letter case, YAML syntax, each file
against its JSON Schema, and the checks across files. Prints one line per issue, file:line:column: path:
message, then a summary. Exit code 0 when valid, 1 when not: fit for pull-request CI.

Arguments:
  dir                  the repository's root directory (default: the current directory)

Options:
  --format text        one issue per line (default)
  --format github      GitHub Actions annotations, shown on the pull request's diff
  --base rev           the revision the change goes onto (origin/main): of two flags with one id, or keys
                       differing only in letter case, the one there keeps it and the other file is named;
                       a project or flag whose id differs from the one it has there is an issue, as a push
                       over the service's /git refuses it (ids are stable: keys and API paths name them)
  -h, --help           show this help
`;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { format: { type: 'string', default: 'text' }, base: { type: 'string' } },
  });
  if (positionals.length > 1) throw new UsageError(`expected at most one directory, got ${positionals.length}`);
  const format = values.format as IssueFormat;
  if (!ISSUE_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${ISSUE_FORMATS.join(', ')}`);
  const dir = positionals[0] ?? '.';
  const absolute = resolve(io.cwd, dir);
  const isDir = await stat(absolute).then(
    (s) => s.isDirectory(),
    () => false,
  );
  // A directory that cannot be read is the work's failure (1), not a wrong command line (2).
  if (!isDir) {
    io.stderr(`flagops validate: ${dir} is not a directory that can be read\n`);
    return EXIT.failed;
  }

  const tree = await readRepositoryTree(absolute);
  if (!tree) {
    io.stderr(`flagops validate: ${dir} has no projects/ folder; is it the root of a flags repository?\n`);
    return EXIT.failed;
  }
  const { files, entries } = tree;
  // As a push: a tree the rules refuse (links, sizes) is not read further, so nothing is said of what a link stands for.
  const refused = treeRefusals(entries);
  if (refused.length > 0) {
    for (const issue of refused) io.stdout(`${formatIssueLine(issue, dir, format)}\n`);
    io.stdout(
      `${dir}: ${plural(refused.length, 'issue')} in ${plural(refused.length, 'file')}; the files are checked once these are fixed\n`,
    );
    return EXIT.failed;
  }
  const collisions = caseCollisionIssues(entries.map((entry) => entry.path));
  let read = readRepositoryFiles(files, null, { locate: true });
  const idChanges: ValidationIssue[] = [];
  if (values.base !== undefined) {
    const base = await revisionOf(absolute, values.base);
    if (!base) {
      io.stderr(`flagops validate: --base ${values.base} is not a commit of the git repository in ${dir}\n`);
      return EXIT.failed;
    }
    if (read.clashes.length > 0) {
      const incumbents = await incumbentsAt(read.clashes, base.textAt);
      if (incumbents.size > 0) read = readRepositoryFiles(files, null, { locate: true, incumbents });
    }
    const texts = new Map(files.map((file) => [file.path, file.text]));
    for (const path of await base.changedPaths()) {
      const issue = texts.has(path) ? idChangeIssue(path, await base.textAt(path), texts.get(path)) : null;
      if (issue) idChanges.push(issue);
    }
  }
  const { state } = read;
  const issues = [...collisions, ...read.issues, ...idChanges];
  for (const issue of issues) io.stdout(`${formatIssueLine(issue, dir, format)}\n`);

  let flags = 0;
  for (const project of state.projects.values()) flags += project.flags.size;
  const served = `${plural(state.projects.size, 'valid project')}, ${plural(flags, 'valid flag')}, ${plural(files.length, 'file')} checked`;
  if (issues.length === 0) {
    io.stdout(`${dir}: valid (${served})\n`);
    return EXIT.ok;
  }
  const badFiles = new Set(issues.map((issue) => issue.file)).size;
  io.stdout(`${dir}: ${plural(issues.length, 'issue')} in ${plural(badFiles, 'file')} (${served})\n`);
  return EXIT.failed;
}

const execGit = promisify(execFile);

/**
 * `rev` in the git repository holding `dir`: its files' texts by path from `dir` (undefined: no such file), and
 * the paths from `dir` whose text in `dir` differs from it; undefined when `rev` is no commit there.
 */
async function revisionOf(
  dir: string,
  rev: string,
): Promise<{ textAt: (path: string) => Promise<string | undefined>; changedPaths: () => Promise<string[]> } | undefined> {
  const commit = await execGit('git', ['-C', dir, 'rev-parse', '--verify', '--quiet', `${rev}^{commit}`]).then(
    ({ stdout }) => stdout.trim(),
    () => undefined,
  );
  if (!commit) return undefined;
  return {
    textAt: (path) =>
      execGit('git', ['-C', dir, 'show', `${commit}:./${path}`], { maxBuffer: 2 * 1024 * 1024 }).then(
        ({ stdout }) => stdout,
        () => undefined,
      ),
    // Against the work tree, so what is changed but not committed yet counts too.
    changedPaths: () =>
      execGit('git', ['-C', dir, 'diff', '-z', '--name-only', '--relative', '--no-renames', commit, '--', '.'], {
        maxBuffer: 16 * 1024 * 1024,
      }).then(({ stdout }) => stdout.split('\0').filter(Boolean)),
  };
}

export const validateCommand: Command = {
  name: 'validate',
  summary: 'check a flags repository directory (for pull-request CI)',
  help,
  run,
};
