import type { Pusher } from '@flagops/core';
import { FlagopsError } from '../../foundations/errors/kinds.js';
import { incumbentsAt, readRepositoryFiles } from '../../foundations/repository/read-repository.js';
import { idChangeIssue } from '../../foundations/repository/stable-ids.js';
import { caseCollisionIssues } from '../../foundations/repository/tree-rules.js';
import { appendHookPushRecords } from '../../foundations/state/index.js';
import { formatIssue, newIssues, type ValidationIssue } from '../../foundations/validation/issue.js';
import { checkPushBudgets, type PushBudgetContext } from './push-budgets.js';
import { heldBackChanges } from './push-held-back.js';
import { checkCommitLimits } from './push-limits.js';
import { type PushOnTarget, pushOn } from './push-on.js';
import { blobsOfChanges, checkPushPermissions, type PushLimits } from './push-permissions.js';
import {
  firstParentChanges,
  isAncestor,
  onFirstParentLine,
  pushedCommits,
  readPushedFiles,
  readPushedTree,
  refTarget,
  ZERO_OID,
} from './pushed-objects.js';

export { ZERO_OID } from './pushed-objects.js';

const MAIN = 'refs/heads/main';
const PROPOSALS = 'refs/heads/proposals/';
const PROJECT_FILE = /^projects\/[^/]+\/project\.yaml$/;
/**
 * Why a push whose pusher cannot be recorded is refused, kills included: git would take commits whose audit entries
 * lack the key that pushed them (`pushedBy`), while their author is whatever the pusher wrote. An API kill names
 * its key in its own signed commit, so it goes on.
 */
const UNRECORDED =
  "nothing was changed: the key that pushes is recorded with the pushed commits (their audit entries' pushedBy) before git takes them, kills included; push again once it can be recorded, or kill through the API meanwhile, which names its key in its own commit";
const MAIN_MOVED = `${MAIN}: main moved while the push was checked (an API change or another push); nothing was changed: fetch, rebase on main and push again`;

export interface RefUpdate {
  oldOid: string;
  newOid: string;
  ref: string;
}

/** Who pushes, and what the service holds them to; absent when the check runs as a git server's own hook. */
export interface PushContext {
  pusher: Pusher;
  /** The plan's project limit (FLAGOPS_PLAN_PROJECT_LIMIT). */
  projectLimit?: number;
  /** Where the accepted push's commits are recorded with their pusher (PushLog.hookTarget). */
  pushLog?: string;
  /** A limited key's projects and environments: files outside them are refused. */
  limits?: PushLimits;
  /** The service's time and the pusher's use of the budgets in the last hour: what budgets hold the push to. */
  budget?: PushBudgetContext;
  /** Remote mode: the git remote an accepted push is pushed on to before main moves here (push-on.ts). */
  pushOn?: PushOnTarget;
}

/** Reads the files of `commit` by path (undefined: no such file). */
async function filesAt(commit: string): Promise<(path: string) => Promise<string | undefined>> {
  const files = new Map((await readPushedFiles(commit)).map((file) => [file.path, file.text]));
  return async (path) => files.get(path);
}

/**
 * Of the pushed main's issues, those the push brings: every issue in a file it adds or changes, and any other
 * that main did not have (a flag file deleted while another flag's config names it as a prerequisite). An
 * invalid file already on main that the push leaves as it was stays held back as it is served, and refuses a
 * push to other flags and projects no more than it refuses an API write to them; a push changing what it holds
 * back is refused as such a write is (push-held-back.ts). Also the paths of the YAML files the push changes.
 */
async function issuesBrought(
  issues: ValidationIssue[],
  pushed: ReadonlyArray<{ path: string; text: string }>,
  oldOid: string,
): Promise<{ brought: ValidationIssue[]; left: ValidationIssue[]; changed: string[] }> {
  if (issues.length === 0 || oldOid === ZERO_OID) return { brought: issues, left: [], changed: [] };
  const before = await readPushedTree(oldOid);
  const had = [...caseCollisionIssues(before.paths), ...readRepositoryFiles(before.files, oldOid).issues];
  const newOnes = new Set(newIssues(had, issues));
  const textBefore = new Map(before.files.map((file) => [file.path, file.text]));
  const textAfter = new Map(pushed.map((file) => [file.path, file.text]));
  const changed = [...new Set([...textBefore.keys(), ...textAfter.keys()])].filter((file) => textBefore.get(file) !== textAfter.get(file));
  const changedSet = new Set(changed);
  const isBrought = (issue: ValidationIssue) => newOnes.has(issue) || (issue.file !== undefined && changedSet.has(issue.file));
  return { brought: issues.filter(isBrought), left: issues.filter((issue) => !isBrought(issue)), changed };
}

/** The lines a pre-receive hook reads on stdin: `<old> <new> <ref>` (githooks(5)). */
export function parseRefUpdates(text: string): RefUpdate[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [oldOid, newOid, ref] = line.split(' ');
      return { oldOid, newOid, ref };
    });
}

/**
 * Why a push must be refused, one line each saying what and where, or nothing. Only `main` exists; it may
 * move only forward, along its first-parent line (the log is the audit trail), only to a commit that brings no
 * invalid file (issuesBrought), and only by commits within the limits of push-limits.ts. Through the service,
 * the pushing key must also be allowed everything the push does (push-permissions.ts), and an accepted push's
 * commits are recorded with it before git may move `main` to them.
 */
export async function checkPush(updates: readonly RefUpdate[], context?: PushContext): Promise<string[]> {
  const problems: string[] = [];
  const accepted: string[] = [];
  for (const { oldOid, newOid, ref } of updates) {
    // On a git host (no pushing key: its own pre-receive hook) other branches are pull requests, and proposal
    // branches the service's own: only main is what the service serves.
    if (context === undefined && ref !== MAIN) continue;
    if (ref.startsWith(PROPOSALS)) {
      problems.push(
        `${ref}: proposal branches are written by the service; fetch them to review, and approve or reject through the API or the dashboard`,
      );
      continue;
    }
    if (ref !== MAIN) {
      problems.push(`${ref}: only ${MAIN} can be pushed; open changes against main`);
      continue;
    }
    if (newOid === ZERO_OID) {
      problems.push(`${ref}: main cannot be deleted; the git log is the audit trail`);
      continue;
    }
    if (oldOid !== ZERO_OID && !(await isAncestor(oldOid, newOid))) {
      problems.push(`${ref}: non-fast-forward push refused; fetch, rebase on main and push again`);
      continue;
    }
    if (oldOid !== ZERO_OID && !(await onFirstParentLine(oldOid, newOid))) {
      problems.push(
        `${ref}: main's head ${oldOid.slice(0, 7)} would leave the first-parent line the audit trail follows (main was merged into your branch); rebase on main (git pull --rebase) and push again, or merge your branch into main`,
      );
      continue;
    }
    const commits = await pushedCommits(oldOid, newOid);
    const overLimits = await checkCommitLimits(commits, { through: context !== undefined });
    problems.push(...overLimits);
    // Files over the limits are not read: one could be a gigabyte.
    if (overLimits.length > 0) continue;
    const { files, paths } = await readPushedTree(newOid);
    const read = readRepositoryFiles(files, newOid, { locate: true });
    // Flags clashing over an id or a key, projects over an id: the one main had keeps it, as served, so the line names the pushed file.
    const incumbents =
      read.clashes.length > 0 && oldOid !== ZERO_OID ? await incumbentsAt(read.clashes, await filesAt(oldOid)) : new Set<string>();
    const { issues } = incumbents.size > 0 ? readRepositoryFiles(files, newOid, { locate: true, incumbents }) : read;
    const { brought, left, changed } = await issuesBrought([...caseCollisionIssues(paths), ...issues], files, oldOid);
    for (const issue of brought) problems.push(formatIssue(issue));
    problems.push(...heldBackChanges(left, changed));
    if (context) {
      const projectFiles = files.filter((f) => PROJECT_FILE.test(f.path));
      const scope = {
        pusher: context.pusher,
        limits: context.limits,
        projectLimit: context.projectLimit,
        projectsAfter: projectFiles.length,
        projectFiles,
      };
      // Each commit the push puts on main's first-parent line is a change the audit trail shows, so each is held
      // to the key's permissions: a change undone by a later commit of the same push was still made on main.
      // One line per refusal, however many commits make it.
      const refusals = new Set<string>();
      const steps = await firstParentChanges(oldOid, newOid);
      const blobs = await blobsOfChanges(steps.flatMap((step) => step.changes));
      for (const step of steps) for (const problem of await checkPushPermissions(step.changes, scope, blobs)) refusals.add(problem);
      // An id no key may change by a push: keys and API paths name it. An import with --replace --yes may.
      for (const { path, change, oldOid, newOid } of steps.flatMap((step) => step.changes)) {
        const issue = change === 'modified' ? idChangeIssue(path, blobs.get(oldOid!), blobs.get(newOid!)) : null;
        if (issue) refusals.add(formatIssue(issue));
      }
      problems.push(...refusals);
      if (context.budget)
        problems.push(
          ...(await checkPushBudgets(
            oldOid,
            newOid,
            context.pusher.type,
            files.filter((f) => PROJECT_FILE.test(f.path)),
            context.budget,
          )),
        );
    }
    accepted.push(...commits);
  }
  // Everything above read main as the push found it. An API change or another push that moved it since would
  // have git's own update fail on its ref lock, saying nothing of why: said here, before the push is recorded or
  // pushed on. (A move between here and git's update still fails on the lock.) On a git host git's words stay:
  // a control plane pushing there knows them as a lost race and makes its change again.
  const main = updates.find((update) => update.ref === MAIN);
  if (problems.length === 0 && context && main && (await refTarget(MAIN)) !== main.oldOid) problems.push(MAIN_MOVED);
  if (problems.length === 0 && context?.pushLog) {
    // On the service's clock when it gave one: budgets count a pushed commit from when it was pushed.
    const at = context.budget?.at ?? new Date().toISOString();
    try {
      await appendHookPushRecords(
        context.pushLog,
        accepted.map((commit) => ({ commit, pushedBy: context.pusher, at })),
      );
    } catch (err) {
      // The database down, or the push log's disk full: a refusal like any other, in the pusher's words.
      if (!(err instanceof FlagopsError && err.code === 'unavailable')) throw err;
      problems.push(`${MAIN}: ${err.message}; ${UNRECORDED}`);
    }
  }
  // Last, once nothing else refuses it: a push the remote took cannot be taken back.
  if (problems.length === 0 && context?.pushOn && main) {
    const refused = await pushOn(context.pushOn, main.newOid);
    if (refused !== null) problems.push(refused);
  }
  return problems;
}
