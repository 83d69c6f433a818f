import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { RepositoryState } from '@flagops/core';
import { computeImpact, describeImpact } from '../../../features/proposals/impact.js';
import { diffStates, type FlagChange } from '../../../foundations/repository/diff-states.js';
import { formatFlagChange } from '../../../foundations/repository/format-changes.js';
import { issuesByUnit } from '../../../foundations/repository/held-units.js';
import type { ValidationIssue } from '../../../foundations/validation/issue.js';
import { escapedControls } from '../../../foundations/validation/one-line.js';
import { type CliIo, type Command, EXIT, UsageError } from '../command.js';

const help = `Usage: flagops diff <rev-a> [<rev-b>] [--repo dir] [--impact]

Prints what changes for flags between two commits of a flags repository, per flag and environment, in
words: "shop/checkout-v2 prod: rolloutPct 10 → 50; rule beta-users added; killed by alice". Commits are
compared as committed (the working tree is not read); <rev-b> defaults to HEAD. Revisions are anything
git rev-parse takes: a branch, a tag, a commit id, HEAD~2.

With --impact, each environment config whose served result changed is followed by its effect on users, counted
exactly over the bucket space: "shop/checkout-v2 prod: moves 15.00 % of users from off to on". That includes a
config that did not change but uses a changed segment or names a changed flag as a prerequisite. Users are
contexts with a userId and no other attribute; when rules, segments or prerequisites changed, who moves depends
on attributes and the line says the impact is not exact. A kill is not a config change (kills.yaml alone has no
impact line).

Options:
  --repo dir           a checkout (or bare repository) of the flags repository (default: the current directory)
  --impact             also print the share of users whose served variation changes, per changed config
  -h, --help           show this help

Files with issues are left out of the comparison; their number is reported on stderr ('flagops validate'
names them). A flag (or project) whose files have issues in either commit is not compared, and is not shown
as deleted or added: "shop/checkout-v2: invalid file in HEAD, not compared". Exit code 0 whether or not
anything changed, 1 when a revision cannot be read.
`;

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { repo: { type: 'string' }, impact: { type: 'boolean' } },
  });
  if (positionals.length < 1 || positionals.length > 2) throw new UsageError('expected one or two revisions');
  const [revA, revB = 'HEAD'] = positionals;
  // Loaded on use, so that `flagops validate` in CI does not load git.
  const { FlagRepository } = await import('../../../foundations/storage/index.js');
  const repo = await FlagRepository.open({ dir: resolve(io.cwd, values.repo ?? '.') });
  try {
    const [a, b] = await Promise.all([repo.resolveRevision(revA), repo.resolveRevision(revB)]);
    // One after the other: the second read starts from the first's trees and parses only the files that differ.
    const before = await repo.readState(a);
    const after = await repo.readState(b);
    for (const [rev, loaded] of [
      [revA, before],
      [revB, after],
    ] as const) {
      if (loaded.issues.length > 0)
        io.stderr(`flagops diff: ${rev} has ${loaded.issues.length} issue(s); what they concern is left out of the comparison\n`);
    }
    const changed = changeLines(diffStates(before.state, after.state), [
      [revA, before.issues],
      [revB, after.issues],
    ]);
    io.stdout(`${changed.length === 0 ? 'no flag changes' : changed.join('\n')}\n`);
    if (values.impact) {
      const lines = impactLines(before.state, after.state);
      io.stdout(lines.length === 0 ? 'impact: no environment config changed\n' : `${lines.join('\n')}\n`);
    }
    return EXIT.ok;
  } finally {
    await repo.close();
  }
}

/**
 * One line per change, in words. A flag whose flag or config files have issues in a commit, or a project whose
 * own files (project.yaml, segments, kills) do, is left out of that commit's state without having been deleted:
 * its changes (`flag deleted`, `flag added`, `project removed`) say nothing true, so it gets one line naming
 * the commits where it is invalid instead. Free text (a kill's reason) is shown with its line breaks escaped, so
 * it cannot show a change of its own.
 */
function changeLines(changes: readonly FlagChange[], sides: ReadonlyArray<readonly [string, readonly ValidationIssue[]]>): string[] {
  const units = sides.map(([rev, issues]) => ({ rev, ...issuesByUnit(issues) }));
  const told = new Set<string>();
  const lines: string[] = [];
  for (const change of changes) {
    const { project, flag } = change;
    const projectRevs = units.filter((side) => side.projectIssues.has(project)).map((side) => side.rev);
    const flagRevs = flag === null ? [] : units.filter((side) => side.flagIssues.get(project)?.has(flag)).map((side) => side.rev);
    const [subject, revs] = projectRevs.length > 0 ? [project, projectRevs] : [`${project}/${flag}`, flagRevs];
    if (revs.length === 0) lines.push(escapedControls(formatFlagChange(change)));
    else if (!told.has(subject)) {
      told.add(subject);
      lines.push(`${subject}: invalid file in ${revs.join(' and ')}, not compared`);
    }
  }
  return lines;
}

/** One line per changed environment config of every project on both sides: `shop/checkout-v2 prod: moves …`. */
function impactLines(before: RepositoryState, after: RepositoryState): string[] {
  const slugs = [...after.projects.keys()].filter((slug) => before.projects.has(slug)).sort();
  return slugs.flatMap((slug) =>
    computeImpact(before.projects.get(slug), after.projects.get(slug)).map((entry) => `${slug}/${entry.flagKey} ${describeImpact(entry)}`),
  );
}

export const diffCommand: Command = { name: 'diff', summary: 'show the flag changes between two commits, in words', help, run };
