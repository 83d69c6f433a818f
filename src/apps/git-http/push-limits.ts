import { entryRefusal, type TreeEntry } from '../../foundations/repository/tree-rules.js';
import { SIGNATURE_TRAILER } from '../../foundations/storage/git/commit-signature.js';
import { blobSizes, commitMessages, type IntroducedFile, introducedFiles, refHeads } from './pushed-objects.js';

/**
 * What the commits of a push may hold, checked commit by commit (every new commit, not only the tip, since
 * each one stays in the repository and in the audit trail):
 *
 * - no `Flagops-*` trailer in a message: the audit trail believes those only from the control plane, and a
 *   pushed commit that carried them would claim to be someone else's change. The one exception is the
 *   service's own signed commit at the head of an open proposal branch here: merging main with it, or
 *   fast-forwarding main to it, is how a push decides the proposal (its change is held to the pusher's
 *   permissions, as any pushed change is);
 * - files only under `projects/`, plus a `README.md` or `README` at the root;
 * - at most 1 MiB per file;
 * - no symbolic links and no submodules (gitlinks).
 *
 * The last three are the tree's rules (tree-rules.ts), which `flagops validate` checks a checkout by too. The
 * first two hold for pushes through the service (`through: true`); a self-hosted git server running the
 * check as its hook may keep CI files and receives the control plane's own commits, so it checks the others.
 */

const MODE_SYMLINK = '120000';
const MODE_GITLINK = '160000';
const FLAGOPS_TRAILER = /^[ \t]*(flagops-[a-z0-9-]*)[ \t]*:/im;
const SIGNED = new RegExp(`\\n${SIGNATURE_TRAILER}: [0-9a-f]{64}\\n$`);
const REJECTION = /^Flagops-Action:[ \t]*proposal_reject[ \t]*$/m;
const PROPOSALS = 'refs/heads/proposals/';

export function shortOid(oid: string): string {
  return oid.slice(0, 12);
}

export async function checkCommitLimits(commits: readonly string[], options: { through: boolean }): Promise<string[]> {
  const problems: string[] = [];
  if (options.through) {
    const messages = await commitMessages(commits);
    // Proposal branches are written by the service alone: a push to them is refused.
    const proposalHeads = [...messages.values()].some((message) => FLAGOPS_TRAILER.test(message)) ? await refHeads(PROPOSALS) : null;
    for (const [oid, message] of messages) {
      const trailer = FLAGOPS_TRAILER.exec(message);
      const openProposal = proposalHeads?.has(oid) === true && SIGNED.test(message) && !REJECTION.test(message);
      if (trailer && !openProposal) {
        problems.push(
          `commit ${shortOid(oid)}: its message carries a ${trailer[1]} trailer; only flagops writes Flagops-* trailers, remove them (git commit --amend, or git rebase -i) and push again`,
        );
      }
    }
  }
  const files = dedupe(await introducedFiles(commits));
  const sizes = await blobSizes(files.filter((f) => f.mode !== MODE_GITLINK).map((f) => f.oid));
  for (const file of files) {
    const refused = entryRefusal(treeEntry(file, sizes), { onlyProjects: options.through });
    if (refused !== undefined) problems.push(`${file.path} (commit ${shortOid(file.commit)}): ${refused}`);
  }
  return problems;
}

function treeEntry(file: IntroducedFile, sizes: ReadonlyMap<string, number>): TreeEntry {
  if (file.mode === MODE_SYMLINK) return { path: file.path, kind: 'symlink' };
  if (file.mode === MODE_GITLINK) return { path: file.path, kind: 'submodule' };
  return { path: file.path, kind: 'file', size: sizes.get(file.oid) ?? 0 };
}

/** A file brought in by several commits of the push (a branch and its merge) is named once, at the first. */
function dedupe(files: readonly IntroducedFile[]): IntroducedFile[] {
  const seen = new Set<string>();
  return files.filter((f) => {
    const key = `${f.path}\0${f.mode}\0${f.oid}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
