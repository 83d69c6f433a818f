import type { EnvironmentName, ProjectState } from '@flagops/core';
import { classifyPath, layout, parseRepositoryFile } from '../../foundations/repository/index.js';
import { configReferenceIssues, segmentUsage } from '../../foundations/repository/project-checks.js';
import type { FlagRepository } from '../../foundations/storage/index.js';
import { pointerToField } from '../../foundations/validation/validate-body.js';

/** What of a proposal decides whether main still holds what it was made against. */
export interface ProposalSubject {
  /** The proposal branch's commit: the change. */
  commit: string;
  projectSlug: string;
  flagKey: string | null;
  fromEnvironment?: EnvironmentName;
}

/**
 * Whether main moved under a proposal since it was made: `reason` says what moved, in words, when it did.
 * `applied`: main holds the proposal's own content already (someone made the same change directly).
 */
export interface Staleness {
  stale: boolean;
  reason?: string;
  applied: boolean;
}

/** A file whose content on main the proposal was made against. */
interface WatchedFile {
  path: string;
  /** Its blob on main when the proposal was made (null: there was none). */
  atBase: string | null;
  /** The proposal's content for it (null: the proposal deletes it); absent for a file it only reads. */
  proposed?: string | null;
  /** A promotion's source: its config is copied as it was then. */
  promotedFrom?: EnvironmentName;
}

/**
 * Compares what a proposal was made against (`base`, main at the time) with main at `head`: the files it
 * changes, and for a promotion the source's config too, since approving copies the source as it was, which no
 * longer is what "promote staging" means once staging moved on. The approval refuses exactly what this calls
 * stale, so the API, the dashboard and MCP show what the approval would answer.
 */
export async function proposalStaleness(
  repo: FlagRepository,
  proposal: ProposalSubject,
  base: string | null,
  head: string | null,
): Promise<Staleness> {
  const watched: WatchedFile[] = (await repo.changedPaths(proposal.commit)).map((p) => ({
    path: p.path,
    atBase: p.oldOid ?? null,
    proposed: p.newOid ?? null,
  }));
  if (proposal.fromEnvironment && proposal.flagKey) {
    const path = layout.configFile(proposal.projectSlug, proposal.fromEnvironment, proposal.flagKey);
    watched.push({ path, atBase: base === null ? null : await repo.treeOid(base, path), promotedFrom: proposal.fromEnvironment });
  }
  const reasons: string[] = [];
  let applied = false;
  for (const file of watched) {
    const now = head === null ? null : await repo.treeOid(head, file.path);
    if (now === file.atBase) {
      // The same bytes again (a push that changed it and a later one that put it back): the version main reports
      // moved all the same, and a write read at the base would answer 409; so does the approval.
      const [then, later] =
        now === null || base === null || head === null
          ? [undefined, undefined]
          : await Promise.all([servedVersionOf(repo, base, file.path), servedVersionOf(repo, head, file.path)]);
      if (then !== undefined && later !== undefined && later !== then)
        reasons.push(`${fileLabel(file.path)} changed on main since and was put back: version ${then} → ${later}`);
      continue;
    }
    if (file.proposed !== undefined && now === file.proposed) applied = true;
    const words = await movedWords(repo, file, now);
    reasons.push(file.promotedFrom ? `${words} (approving would promote ${file.promotedFrom} as it was)` : words);
  }
  if (reasons.length === 0 && head !== null) {
    const unfit = await unfitReason(repo, proposal.projectSlug, watched, head);
    if (unfit !== undefined) reasons.push(unfit);
  }
  return reasons.length === 0 ? { stale: false, applied } : { stale: true, reason: reasons.join('; '), applied };
}

/**
 * Why main at `head` no longer takes what the proposal writes, though the files it changes are as they were:
 * a config naming what main no longer has or serves (a prerequisite flag or a segment deleted, a variation no
 * longer served, a cycle closed), or leaving another flag's prerequisite unmet; a segment deleted that a config
 * on main uses since. The checks an API write makes, so that the reviewer reads why before approving.
 */
async function unfitReason(repo: FlagRepository, slug: string, watched: readonly WatchedFile[], head: string): Promise<string | undefined> {
  let project: ProjectState | undefined;
  for (const file of watched) {
    const where = classifyPath(file.path);
    if (file.proposed === undefined || (where.kind !== 'config' && where.kind !== 'segment')) continue;
    project ??= (await repo.readServed(head)).state.projects.get(slug);
    if (!project) return undefined;
    if (where.kind === 'segment') {
      const uses = file.proposed === null ? segmentUsage(project, where.segment) : [];
      if (uses.length > 0)
        return `${fileLabel(file.path)} is used on main since by ${uses.map((use) => `${use.flag} (${use.environment})`).join(', ')}`;
      continue;
    }
    const current = project.flags.get(where.flag)?.environments[where.environment];
    if (!current || file.proposed === null) continue;
    const parsed = parseRepositoryFile(file.path, await repo.readBlob(file.proposed)).file;
    if (parsed?.kind !== 'config') continue;
    // An issue main's own config has too is main's, not the proposal's.
    const known = new Set(configReferenceIssues(project, where.flag, where.environment, current).map((i) => `${i.path} ${i.message}`));
    const issue = configReferenceIssues(project, where.flag, where.environment, parsed.value).find(
      (i) => !known.has(`${i.path} ${i.message}`),
    );
    if (issue) return `${fileLabel(file.path)} no longer fits main (${pointerToField(issue.path ?? '')}: ${issue.message})`;
  }
  return undefined;
}

/** "prod config of checkout-v2 changed on main since: version 3 → 4", or created, deleted, the same change. */
async function movedWords(repo: FlagRepository, file: WatchedFile, now: string | null): Promise<string> {
  const what = fileLabel(file.path);
  if (now === null) return `${what} was deleted on main since`;
  if (file.atBase === null) return `${what} was created on main since`;
  if (now === file.proposed) return `${what} on main is already as this proposal makes it`;
  const [before, after] = await Promise.all([versionOf(repo, file.path, file.atBase), versionOf(repo, file.path, now)]);
  // A push may leave the version as it was; then only the content says it moved.
  return before !== undefined && after !== undefined && after > before
    ? `${what} changed on main since: version ${before} → ${after}`
    : `${what} changed on main since`;
}

function fileLabel(path: string): string {
  const where = classifyPath(path);
  if (where.kind === 'config') return `${where.environment} config of ${where.flag}`;
  if (where.kind === 'segment') return `segment ${where.segment} of ${where.project}`;
  return path;
}

/** The version main reports at `commit` for a config or segment (it moves with content on every path); else undefined. */
async function servedVersionOf(repo: FlagRepository, commit: string, path: string): Promise<number | undefined> {
  const where = classifyPath(path);
  if (where.kind !== 'config' && where.kind !== 'segment') return undefined;
  const project = (await repo.readServed(commit)).state.projects.get(where.project);
  return where.kind === 'config'
    ? project?.flags.get(where.flag)?.environments[where.environment]?.version
    : project?.segments?.get(where.segment)?.version;
}

/** The `version` of a config or segment blob; undefined for other files and for one that is not valid. */
async function versionOf(repo: FlagRepository, path: string, oid: string): Promise<number | undefined> {
  const { file } = parseRepositoryFile(path, await repo.readBlob(oid));
  return file?.kind === 'config' || file?.kind === 'segment' ? file.value.version : undefined;
}

/**
 * Words for the first step of a schedule the proposal writes that is at or before `now`, or undefined. A step is
 * checked in the future when proposed, but an approval comes later: committing a step that has passed would
 * have the scheduler apply it, and every other passed step, at once, not the plan the reviewer read. Time, not
 * main, makes this, so it is judged at each read, not cached with the head as staleness is.
 */
export async function passedStepReason(repo: FlagRepository, commit: string, now: Date): Promise<string | undefined> {
  for (const changed of await repo.changedPaths(commit)) {
    if (changed.newOid === undefined || classifyPath(changed.path).kind !== 'config') continue;
    const { file } = parseRepositoryFile(changed.path, await repo.readBlob(changed.newOid));
    if (file?.kind !== 'config') continue;
    const passed = file.value.schedule?.find((step) => Date.parse(step.at) <= now.getTime());
    if (passed)
      return `${fileLabel(changed.path)} schedules a step at ${passed.at}, which has passed (it is ${now.toISOString()} now); approving would apply it at once`;
  }
  return undefined;
}
