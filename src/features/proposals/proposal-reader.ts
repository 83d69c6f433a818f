import { randomBytes } from 'node:crypto';
import type { ApprovalActorType, AuditAction, AuditEntry, EnvironmentName, ProjectFile } from '@flagops/core';
import { loopTurn } from '../../foundations/process/loop-turns.js';
import { diffStates } from '../../foundations/repository/diff-states.js';
import { formatFlagChange } from '../../foundations/repository/format-changes.js';
import type { CommitInfo, FlagopsTrailers, FlagRepository, ProposalActor } from '../../foundations/storage/index.js';
import { commitReason, isoTime } from '../audit/commit-entries.js';
import { BUDGET_WINDOW_MINUTES, type BudgetUse, budgetWords } from '../budgets/budget-rules.js';
import { computeImpact, type ImpactEntry } from './impact.js';
import { findMergeOnMain, onFirstParentLine } from './merged-on-main.js';
import { proposalStaleness, type Staleness } from './proposal-staleness.js';

/**
 * Change proposals, kept in git alone: a proposal is the branch `proposals/<id>`, made from main at the time
 * plus one signed commit, the change itself, whose trailers name the proposal (`Flagops-Proposal: <id>`).
 * A rejection is a second commit on the branch that changes no file (action `proposal_reject`, its reason in
 * the body). An approval is the commit on main that applies the change, authored by the approver, with
 * trailers naming the proposal and its proposer; the audit index finds it. A proposal merged on the git host
 * instead (its branch merged into main, or its change squashed onto it) is merged as the commit on main that
 * brought its change in. Nothing else is stored, so proposals survive a restart and travel with the repository
 * (remote mode pushes the branches).
 *
 * Commits the service did not make may land on a branch all the same (on the git host in remote mode, or in the
 * repository on disk): the proposal is still its signed commit below them, shown as it was proposed, and while
 * open it is stale for them, since the branch no longer is the change a reviewer would approve.
 */

export const PROPOSAL_BRANCH_PREFIX = 'refs/heads/proposals/';
const PROPOSAL_ID = /^[a-z0-9]{12}$/;

export type ProposalStatus = 'open' | 'merged' | 'rejected';
export const PROPOSAL_STATUSES: readonly ProposalStatus[] = ['open', 'merged', 'rejected'];

/** A proposal as the API answers it. */
export interface Proposal {
  id: string;
  status: ProposalStatus;
  /** Open, and main changed what it was made against since, or a schedule step it writes has passed: it cannot be approved. */
  stale: boolean;
  /** What changed on main since, in words; only while stale. */
  staleReason?: string;
  projectSlug: string;
  flagKey: string | null;
  environment: EnvironmentName | null;
  fromEnvironment?: EnvironmentName;
  segmentKey?: string;
  action: AuditAction;
  proposedBy: ProposalActor;
  createdAt: string;
  decidedBy?: ProposalActor;
  decidedAt?: string;
  /**
   * `budget`: the change waits because it is past a budget of the proposer's actor type (then `budget` says
   * which, the use so far and what the change adds). For a proposal kept by requireApproval: absent, or the
   * words given with its rejection (also in `rejectionReason`).
   */
  reason?: string;
  /** The words given with a rejection. */
  rejectionReason?: string;
  /** A proposal kept for a budget: the budget, the use of the last 60 minutes and what this change adds, when proposed. */
  budget?: BudgetUse;
  /** The proposal branch's commit: the change. */
  commit: string;
  /** The commit on main that applied it, once merged. */
  mergedAs?: string;
  changes: string[];
  impact: ImpactEntry[];
}

/** What only the service needs besides the proposal: where it is and who may not approve it. */
export interface ProposalRecord {
  proposal: Proposal;
  ref: string;
  /** The branch's head: the change, or the rejection on it. */
  tip: string;
  /** Main when it was proposed (the change's parent). */
  base: string | null;
  /** The rejection's commit, once rejected. */
  rejectedAs?: string;
  /** While open: the branch holds commits the service did not make, in words; it cannot be approved. */
  alteredReason?: string;
  /** The proposer's commit identity: the same person's session may not approve. */
  proposerEmail: string;
  /**
   * The id of the key that proposed it: that key, or one made from it by rotation, may not approve. Absent for
   * a session's proposal, and for a key's made before proposals recorded it (then its prefix tells).
   */
  proposerKeyId?: string;
}

export function newProposalId(): string {
  // 60 bits in 12 characters of [a-z0-9]: collisions are as likely as a lost coin toss sixty times in a row.
  const bytes = randomBytes(12);
  return [...bytes].map((b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');
}

export function isProposalId(id: string): boolean {
  return PROPOSAL_ID.test(id);
}

export function proposalRef(id: string): string {
  return `${PROPOSAL_BRANCH_PREFIX}${id}`;
}

/** Whether `project` makes `actorType`'s changes into `environment` wait for approval. */
export function requiresApproval(project: ProjectFile, environment: EnvironmentName, actorType: string): boolean {
  return (project.requireApproval?.[environment] ?? []).includes(actorType as ApprovalActorType);
}

/** Whether `project` makes any change of `actorType` wait somewhere: segments act in every environment. */
export function requiresApprovalAnywhere(project: ProjectFile, actorType: string): boolean {
  return Object.values(project.requireApproval ?? {}).some((types) => types?.includes(actorType as ApprovalActorType));
}

function actorOf(trailers: FlagopsTrailers, commit: CommitInfo): ProposalActor {
  const actor: ProposalActor = { type: trailers.actor.type, name: trailers.actor.name ?? commit.author.name };
  if (trailers.actor.keyPrefix) actor.keyPrefix = trailers.actor.keyPrefix;
  if (trailers.actor.role) actor.role = trailers.actor.role;
  return actor;
}

/** What a proposal's change does: its words and its impact, from main at the time to the change. Immutable. */
interface ChangeSummary {
  changes: string[];
  impact: ImpactEntry[];
}

/** What a proposal branch holds, from its head down its first-parent line to the service's commit of the change. */
interface BranchContent {
  /** The service's signed commit of the change. */
  change: CommitInfo;
  /** The service's signed rejection above it, if any. */
  rejection: CommitInfo | null;
  /** The commits above the change the service did not make (unsigned): how many, and the newest three in words. */
  foreign: { count: number; named: string[] };
}

/** Reads the proposals of one organisation's repository; what a proposal's commits say is cached by commit. */
export class ProposalReader {
  private readonly summaries = new Map<string, Promise<ChangeSummary>>();
  /** Per proposal commit, its staleness against the head it was last read at. */
  private readonly staleness = new Map<string, { head: string | null; result: Promise<Staleness> }>();
  /** Per open proposal's commit, the commit on main that brought its change in (null: none) as of a head. */
  private readonly merges = new Map<string, { head: string; result: Promise<CommitInfo | null> }>();
  /** Per proposal, what its branch holds as of a head of the branch. */
  private readonly contents = new Map<string, { tip: string; result: Promise<BranchContent | null> }>();

  constructor(
    private readonly repo: FlagRepository,
    /** The entry of the commit on main that applied a proposal (the audit index knows). */
    private readonly appliedOnMain: (id: string) => Promise<AuditEntry | undefined>,
  ) {}

  /** Every proposal, newest first. */
  async list(): Promise<ProposalRecord[]> {
    const [branches, head] = await Promise.all([this.repo.branches(PROPOSAL_BRANCH_PREFIX), this.repo.head()]);
    const records = await Promise.all(branches.map((b) => this.read(b.ref.slice(PROPOSAL_BRANCH_PREFIX.length), b.oid, head)));
    return records
      .filter((r): r is ProposalRecord => r !== null)
      .sort((a, b) => b.proposal.createdAt.localeCompare(a.proposal.createdAt) || b.proposal.id.localeCompare(a.proposal.id));
  }

  /** One proposal, or null when there is no such branch (or it is not one this service made). */
  async get(id: string): Promise<ProposalRecord | null> {
    if (!isProposalId(id)) return null;
    const [tip, head] = await Promise.all([this.repo.branch(proposalRef(id)), this.repo.head()]);
    return tip === null ? null : this.read(id, tip, head);
  }

  /**
   * The audit entries that live on proposal branches, newest first: each proposal's opening (its id is the
   * change's commit) and its rejection (the rejection's commit).
   */
  async auditEntries(): Promise<AuditEntry[]> {
    const entries: AuditEntry[] = [];
    for (const { proposal, tip, rejectedAs } of await this.list()) {
      const base: Omit<AuditEntry, 'id' | 'at' | 'action' | 'actor'> = {
        projectSlug: proposal.projectSlug,
        flagKey: proposal.flagKey,
        environment: proposal.environment,
        proposalId: proposal.id,
      };
      if (proposal.fromEnvironment) base.fromEnvironment = proposal.fromEnvironment;
      if (proposal.segmentKey) base.segmentKey = proposal.segmentKey;
      const opened: AuditEntry = {
        ...base,
        id: proposal.commit,
        at: proposal.createdAt,
        action: 'proposal_open',
        actor: { ...proposal.proposedBy },
      };
      if (proposal.budget) opened.reason = `budget: ${budgetWords(proposal.budget)}`;
      entries.push(opened);
      if (proposal.status === 'rejected' && proposal.decidedBy && proposal.decidedAt) {
        const rejection: AuditEntry = {
          ...base,
          id: rejectedAs ?? tip,
          at: proposal.decidedAt,
          action: 'proposal_reject',
          actor: { ...proposal.decidedBy },
        };
        if (proposal.rejectionReason) rejection.reason = proposal.rejectionReason;
        entries.push(rejection);
      }
    }
    return entries.sort((a, b) => b.at.localeCompare(a.at) || b.id.localeCompare(a.id));
  }

  private async read(id: string, tip: string, head: string | null): Promise<ProposalRecord | null> {
    const content = await this.contentAt(id, tip);
    if (!content) return null;
    const { change: tipCommit, rejection: decision, foreign } = content;
    const trailers = tipCommit.flagops;
    if (!trailers?.project) return null;
    const summary = await this.summary(tipCommit);
    const proposal: Proposal = {
      id,
      status: 'open',
      stale: false,
      projectSlug: trailers.project,
      flagKey: trailers.flag ?? null,
      environment: trailers.environment ?? null,
      action: trailers.action,
      proposedBy: actorOf(trailers, tipCommit),
      createdAt: isoTime(tipCommit.author.timestamp),
      commit: tipCommit.oid,
      changes: summary.changes,
      impact: summary.impact,
    };
    if (trailers.fromEnvironment) proposal.fromEnvironment = trailers.fromEnvironment;
    if (trailers.segment) proposal.segmentKey = trailers.segment;
    if (trailers.budget && trailers.environment) {
      proposal.reason = 'budget';
      proposal.budget = {
        environment: trailers.environment,
        actorType: proposal.proposedBy.type as BudgetUse['actorType'],
        ...trailers.budget,
        windowMinutes: BUDGET_WINDOW_MINUTES,
      };
    }
    if (decision?.flagops) {
      proposal.status = 'rejected';
      proposal.decidedBy = actorOf(decision.flagops, decision);
      proposal.decidedAt = isoTime(decision.author.timestamp);
      const reason = commitReason(decision);
      if (reason) {
        proposal.rejectionReason = reason;
        if (!proposal.budget) proposal.reason = reason;
      }
    }
    const base = tipCommit.parents[0] ?? null;
    if (!decision) {
      const applied = await this.appliedOnMain(id);
      const merge = applied ? null : await this.mergeAt(tipCommit.oid, base, head);
      if (applied) {
        proposal.status = 'merged';
        // Main fast-forwarded to the proposal's own commit by a push: the pushing key decided it, not its proposer.
        const pusher = applied.id === tipCommit.oid ? applied.pushedBy : undefined;
        proposal.decidedBy = pusher ? { ...pusher } : ({ ...applied.actor } as ProposalActor);
        proposal.decidedAt = applied.at;
        proposal.mergedAs = applied.id;
      } else if (merge) {
        // Whoever made the commit that brought it in decided it: the engineer merging on the git host.
        proposal.status = 'merged';
        proposal.decidedBy = merge.flagops ? actorOf(merge.flagops, merge) : { type: 'git', name: merge.author.name };
        proposal.decidedAt = isoTime(merge.author.timestamp);
        proposal.mergedAs = merge.oid;
      }
    }
    const record: ProposalRecord = { proposal, ref: proposalRef(id), tip, base, proposerEmail: tipCommit.author.email };
    if (trailers.proposerKeyId) record.proposerKeyId = trailers.proposerKeyId;
    if (decision) record.rejectedAs = decision.oid;
    if (proposal.status === 'open') {
      const { stale, reason } = await this.stalenessAt(proposal, base, head);
      const altered = foreign.count > 0 ? alteredWords(id, foreign) : undefined;
      if (altered) record.alteredReason = altered;
      const reasons = [altered, reason].filter((r): r is string => r !== undefined);
      proposal.stale = stale || altered !== undefined;
      if (reasons.length > 0) proposal.staleReason = reasons.join('; ');
    } else this.staleness.delete(proposal.commit);
    return record;
  }

  /**
   * What branch `proposals/<id>` at `tip` holds, or null when it is not a proposal this service made. Only the
   * service's own (signed) commits count: the first one down the first-parent line is the rejection or the change
   * of proposal `id`; commits without a signature above them (someone else's, on the git host) are passed over and
   * named. A signed commit of anything else there means the branch was rewritten onto other history.
   */
  private contentAt(id: string, tip: string): Promise<BranchContent | null> {
    const known = this.contents.get(id);
    if (known?.tip === tip) return known.result;
    const result = this.walkBranch(id, tip);
    this.contents.set(id, { tip, result });
    result.catch(() => {
      if (this.contents.get(id)?.result === result) this.contents.delete(id);
    });
    return result;
  }

  private async walkBranch(id: string, tip: string): Promise<BranchContent | null> {
    const foreign = { count: 0, named: [] as string[] };
    let rejection: CommitInfo | null = null;
    let at: string | undefined = tip;
    while (at !== undefined) {
      // Unsigned history may be long (a branch reset onto main as it was before signing): walked beside evaluations.
      if (foreign.count > 0) await loopTurn();
      const commit = await this.repo.readCommit(at);
      const trailers = commit.flagops;
      if (trailers === null) {
        if (++foreign.count <= 3) foreign.named.push(`${commit.oid.slice(0, 12)} by ${commit.author.name}`);
      } else if (trailers.proposalId !== id) return null;
      else if (trailers.action === 'proposal_reject') rejection ??= commit;
      // An approval on main names the proposal too, and its proposer; the change itself does not.
      else if (trailers.proposedBy !== undefined || !trailers.project) return null;
      else return { change: commit, rejection, foreign };
      at = commit.parents[0];
    }
    return null;
  }

  /**
   * The commit on main's first-parent line since `base` that brought the proposal's change in (findMergeOnMain),
   * or null. When main only gained commits since the last read, only those are walked, and a commit found
   * before stays the answer.
   */
  private mergeAt(commit: string, base: string | null, head: string | null): Promise<CommitInfo | null> {
    if (head === null) return Promise.resolve(null);
    const known = this.merges.get(commit);
    if (known?.head === head) return known.result;
    const result = (async () => {
      const before = known && (await known.result.catch(() => undefined));
      if (known && before && (await onFirstParentLine(this.repo, head, known.head))) return before;
      const change = { commit, paths: await this.repo.changedPaths(commit) };
      if (known && before === null) {
        const since = await findMergeOnMain(this.repo, change, head, known.head);
        if (since.complete) return since.merge;
      }
      return (await findMergeOnMain(this.repo, change, head, base)).merge;
    })();
    this.merges.set(commit, { head, result });
    result.catch(() => {
      if (this.merges.get(commit)?.result === result) this.merges.delete(commit);
    });
    return result;
  }

  private stalenessAt(proposal: Proposal, base: string | null, head: string | null): Promise<Staleness> {
    const known = this.staleness.get(proposal.commit);
    if (known && known.head === head) return known.result;
    const result = proposalStaleness(this.repo, proposal, base, head);
    this.staleness.set(proposal.commit, { head, result });
    result.catch(() => {
      if (this.staleness.get(proposal.commit)?.result === result) this.staleness.delete(proposal.commit);
    });
    return result;
  }

  private summary(commit: CommitInfo): Promise<ChangeSummary> {
    let summary = this.summaries.get(commit.oid);
    if (!summary) {
      summary = this.computeSummary(commit);
      this.summaries.set(commit.oid, summary);
      summary.catch(() => this.summaries.delete(commit.oid));
    }
    return summary;
  }

  private async computeSummary(commit: CommitInfo): Promise<ChangeSummary> {
    const trailers = commit.flagops!;
    const [before, after] = await Promise.all([this.repo.readState(commit.parents[0] ?? null), this.repo.readState(commit.oid)]);
    const slug = trailers.project!;
    const changes = diffStates(before.state, after.state)
      .filter((c) => c.project === slug && (trailers.flag === undefined || c.flag === trailers.flag))
      .map(formatFlagChange);
    const scope = trailers.flag === undefined ? {} : { flagKey: trailers.flag, environment: trailers.environment };
    return { changes, impact: computeImpact(before.state.projects.get(slug), after.state.projects.get(slug), scope) };
  }
}

/** Why a branch with commits the service did not make cannot be approved, naming them (the first three). */
function alteredWords(id: string, foreign: BranchContent['foreign']): string {
  const named = foreign.count > foreign.named.length ? [...foreign.named, `${foreign.count - foreign.named.length} more`] : foreign.named;
  const commits = foreign.count === 1 ? 'a commit' : `${foreign.count} commits`;
  return `its branch proposals/${id} has ${commits} the service did not make on top of the proposed change (${named.join(', ')}), so the branch no longer is the change shown here`;
}
