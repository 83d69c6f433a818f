import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { diffStates } from '../../repository/diff-states.js';
import { formatChanges } from '../../repository/format-changes.js';
import { type CliIo, type Command, EXIT, UsageError } from '../command.js';

const help = `Usage: flagops diff <rev-a> [<rev-b>] [--repo dir]

Prints what changes for flags between two commits of a flags repository, per flag and environment, in
words: "shop/checkout-v2 prod: rolloutPct 10 → 50; rule beta-users added; killed by alice". Commits are
compared as committed (the working tree is not read); <rev-b> defaults to HEAD. Revisions are anything
git rev-parse takes: a branch, a tag, a commit id, HEAD~2.

Options:
  --repo dir           a checkout (or bare repository) of the flags repository (default: the current directory)
  -h, --help           show this help

Files with issues are left out of the comparison; their number is reported on stderr ('flagops validate'
names them). Exit code 0 whether or not anything changed, 1 when a revision cannot be read.
`;

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { repo: { type: 'string' } } });
  if (positionals.length < 1 || positionals.length > 2) throw new UsageError('expected one or two revisions');
  const [revA, revB = 'HEAD'] = positionals;
  // Loaded on use, so that `flagops validate` in CI does not load git.
  const { FlagRepository } = await import('../../storage/index.js');
  const repo = await FlagRepository.open({ dir: resolve(io.cwd, values.repo ?? '.') });
  try {
    const [a, b] = await Promise.all([repo.resolveRevision(revA), repo.resolveRevision(revB)]);
    const [before, after] = await Promise.all([repo.readState(a), repo.readState(b)]);
    for (const [rev, loaded] of [
      [revA, before],
      [revB, after],
    ] as const) {
      if (loaded.issues.length > 0)
        io.stderr(`flagops diff: ${rev} has ${loaded.issues.length} issue(s); what they concern is left out of the comparison\n`);
    }
    io.stdout(`${formatChanges(diffStates(before.state, after.state))}\n`);
    return EXIT.ok;
  } finally {
    await repo.close();
  }
}

export const diffCommand: Command = { name: 'diff', summary: 'show the flag changes between two commits, in words', help, run };
