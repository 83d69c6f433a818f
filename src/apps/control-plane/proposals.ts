import type { AuditEntry } from '@flagops/core';
import type { BudgetUse } from '../../features/budgets/budget-rules.js';
import {
  isProposalId,
  newProposalId,
  PROPOSAL_STATUSES,
  type Proposal,
  ProposalReader,
  type ProposalRecord,
  type ProposalStatus,
  proposalRef,
} from '../../features/proposals/proposal-reader.js';
import { passedStepReason, proposalStaleness } from '../../features/proposals/proposal-staleness.js';
import { limitedToProjects } from '../../foundations/auth/scope.js';
import {
  ConflictError,
  ForbiddenError,
  InvalidContentError,
  InvalidInputError,
  NotFoundError,
  ProposalConflictError,
} from '../../foundations/errors/kinds.js';
import { projectById } from '../../foundations/repository/state-lookup.js';
import { authorIdentity, type Change, type FlagRepository, type ServedState, type WriteFn } from '../../foundations/storage/index.js';
import { refuseHeldBack } from './flag-write.js';
import { optionalQuery, route } from './route-table.js';
import type { Workspace } from './workspace.js';

export const proposalRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/proposals',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, query }) => {
      const status = optionalQuery(query, 'status');
      if (status !== undefined && !(PROPOSAL_STATUSES as readonly string[]).includes(status))
        throw new InvalidInputError(`status: must be one of ${PROPOSAL_STATUSES.join(', ')}`, 'status');
      const projectId = optionalQuery(query, 'projectId');
      return { body: { proposals: await listProposals(ws, { status: status as ProposalStatus | undefined, projectId }) } };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/proposals/:id',
    permission: 'read',
    body: 'none',
    handle: async ({ ws, params }) => ({ body: (await proposalRecord(ws, params.id)).proposal }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/proposals/:id/approve',
    permission: 'proposal.decide',
    environmentFromResource: true,
    body: 'json',
    handle: async ({ ws, params }) => ({ body: await approveProposal(ws, params.id) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/proposals/:id/reject',
    permission: 'proposal.decide',
    environmentFromResource: true,
    body: 'proposal-reject?',
    handle: async ({ ws, params, body }) => ({ body: await rejectProposal(ws, params.id, body?.reason) }),
  }),
];

/** Who may approve a proposal, in words for answers that tell a proposer what happens next. */
export const APPROVERS = 'an admin key or a dashboard session (not the credential that proposed it)';

const readers = new WeakMap<FlagRepository, ProposalReader>();

/** The organisation's proposals, read from its repository's branches and main's audit index. */
export function proposalReader(ws: Workspace): ProposalReader {
  let reader = readers.get(ws.repo);
  if (!reader) {
    const { audit } = ws.deps;
    const org = ws.org;
    reader = new ProposalReader(ws.repo, async (id) => (await audit.get(org)).appliedProposal(id));
    readers.set(ws.repo, reader);
  }
  return reader;
}

/** The audit entries that live on proposal branches (opened, rejected), for the audit trail. */
export function proposalAuditEntries(ws: Workspace): Promise<AuditEntry[]> {
  return proposalReader(ws).auditEntries();
}

export async function listProposals(ws: Workspace, filter: { status?: ProposalStatus; projectId?: string }): Promise<Proposal[]> {
  const slug = filter.projectId === undefined ? undefined : projectById((await ws.readServed()).state, filter.projectId).project.slug;
  const visible = await visibleProjects(ws);
  const proposals = (await proposalReader(ws).list())
    .map((r) => r.proposal)
    .filter(
      (p) =>
        (filter.status === undefined || p.status === filter.status) &&
        (slug === undefined || p.projectSlug === slug) &&
        (visible === undefined || visible.has(p.projectSlug)),
    );
  return Promise.all(proposals.map((p) => withPassedSteps(ws, p)));
}

/**
 * An open proposal that is not stale but writes a schedule step that has passed cannot be approved either
 * (approveProposal refuses it): it is shown stale, with the step, so the list and the proposal say so.
 */
async function withPassedSteps(ws: Workspace, proposal: Proposal): Promise<Proposal> {
  if (proposal.status !== 'open' || proposal.stale) return proposal;
  const reason = await passedStepReason(ws.repo, proposal.commit, ws.now());
  return reason === undefined ? proposal : { ...proposal, stale: true, staleReason: reason };
}

/** The slugs of the projects a credential limited to projects sees (undefined: it is not limited). */
async function visibleProjects(ws: Workspace): Promise<ReadonlySet<string> | undefined> {
  return limitedToProjects(ws.principal.scope) ? new Set((await ws.readServed()).state.projects.keys()) : undefined;
}

/** A proposal of a project the caller cannot see is not found to it. */
async function proposalRecord(ws: Workspace, id: string): Promise<ProposalRecord> {
  let record = isProposalId(id) ? await proposalReader(ws).get(id) : null;
  // Opened through another control plane a moment ago (remote mode), its branch may not be here yet: a pull
  // brings it, but none may run before this is answered (main holding kills the remote lacks cannot be pulled).
  if (!record && isProposalId(id)) {
    await ws.repo.fetchBranch(proposalRef(id));
    record = await proposalReader(ws).get(id);
  }
  const visible = record ? await visibleProjects(ws) : undefined;
  if (!record || (visible !== undefined && !visible.has(record.proposal.projectSlug)))
    throw new NotFoundError(`proposal ${JSON.stringify(id)}`);
  return { ...record, proposal: await withPassedSteps(ws, record.proposal) };
}

/**
 * Deciding acts in the proposal's environment: a credential limited to environments decides only in those. A
 * proposal without one (archiving a flag, changing a segment) acts in every environment, so such a credential
 * is refused with the words of what it does.
 */
function authorizeDecision(ws: Workspace, proposal: Proposal): void {
  if (proposal.environment) ws.authorize('proposal.decide', { environment: proposal.environment });
  else ws.authorize(proposal.action === 'flag_archive' ? 'flag.archive' : 'segment.update', {});
}

/**
 * Puts a change on a new proposal branch instead of main: `build` plans it on what main's head serves, as a
 * direct write would (held-back flags are refused the same way). Null when the change would change nothing
 * (no branch is made); otherwise the open proposal. `budget`: it waits because it is past that budget.
 */
export async function openProposal(
  ws: Workspace,
  build: (served: ServedState) => Change<null>,
  budget?: BudgetUse,
): Promise<Proposal | null> {
  const id = newProposalId();
  const figures = budget && { movedPctPerHour: budget.movedPctPerHour, usedPct: budget.usedPct, addsPct: budget.addsPct };
  const proposerKeyId = ws.principal.kind === 'session' ? undefined : ws.principal.keyId;
  const outcome = await ws.repo.commitOnNewBranch(proposalRef(id), async (_committed, head) => {
    const change = build(await ws.readServed(head));
    return {
      ...change,
      meta: {
        ...change.meta,
        summary: `propose: ${change.meta.summary}`,
        proposal: { id, ...(proposerKeyId ? { proposerKeyId } : {}), ...(figures ? { budget: figures } : {}) },
      },
    };
  });
  if (!outcome.committed) return null;
  return (await proposalRecord(ws, id)).proposal;
}

function refuseDecided(proposal: Proposal): void {
  if (proposal.status !== 'open') throw new ConflictError(`proposal ${proposal.id} is ${proposal.status} already`);
}

/**
 * ConflictError when the proposal was decided after `record` was read: approved (main holds its approval or
 * a merge of it) or rejected (its branch moved). Run in the write queue, where both decisions are made, and in the
 * turn among control planes sharing a remote, with main caught up and the branch fetched: of an approval and a
 * rejection at once, through one control plane or several, exactly one is made and the other answers 409.
 */
async function refuseDecidedSince(ws: Workspace, record: ProposalRecord): Promise<ProposalRecord> {
  const current = await proposalRecord(ws, record.proposal.id);
  refuseDecided(current.proposal);
  return current;
}

/**
 * Applies an open proposal's change on main as one commit authored by the approver, with trailers naming the
 * proposal and its proposer. The change applies only where main still holds what the proposal changed, still
 * takes it (what it names is still there), no schedule step it writes has passed and its branch holds no commit
 * the service did not make (else 409 version_conflict, and it stays open). Answers once evaluation serves it.
 */
export async function approveProposal(ws: Workspace, id: string): Promise<Proposal> {
  const record = await proposalRecord(ws, id);
  const { proposal } = record;
  authorizeDecision(ws, proposal);
  refuseDecided(proposal);
  refuseProposer(ws, record);
  const paths = await ws.repo.changedPaths(proposal.commit);
  const summary = (await ws.repo.readCommit(proposal.commit)).summary.replace(/^propose: /, '');
  const apply: WriteFn<null> = async (_committed, head) => {
    // Decided here, where a rejection is decided too (refuseDecidedSince): whichever comes first wins.
    const current = await refuseDecidedSince(ws, record);
    // Read with the branch as the remote holds it now: what the reviewer would approve is no longer the branch.
    if (current.alteredReason !== undefined) throw staleError(id, current.alteredReason);
    const served = await ws.readServed(head);
    refuseHeldBack(served, proposal.projectSlug, proposal.flagKey ?? undefined);
    // The same judgement the proposal's `stale` shows, on the head this commit goes on.
    const staleness = await proposalStaleness(ws.repo, proposal, record.base, head);
    if (staleness.applied) throw new ConflictError(`proposal ${id} is applied already: ${staleness.reason}`);
    const reason = staleness.stale ? staleness.reason : await passedStepReason(ws.repo, proposal.commit, ws.now());
    if (reason !== undefined) throw staleError(id, reason);
    const changes = await Promise.all(proposedContents(ws, paths));
    return {
      changes,
      meta: {
        action: proposal.action,
        summary: `${summary} (proposal ${id})`,
        actor: ws.actor,
        ...subjectTrailers(proposal),
        proposal: { id, proposedBy: proposal.proposedBy },
      },
      result: null,
    };
  };
  // The branch is fetched first in remote mode: a rejection made through another control plane is read.
  try {
    await ws.repo.update(apply, { withBranch: record.ref });
  } catch (err) {
    // Files main no longer takes beside its others, for a reason staleness does not check: stale all the same.
    if (err instanceof InvalidContentError) throw staleError(id, `main no longer takes its change (${err.message})`);
    throw err;
  }
  await ws.served();
  return (await proposalRecord(ws, id)).proposal;
}

function staleError(id: string, reason: string): ProposalConflictError {
  return new ProposalConflictError(
    `proposal ${id} is stale: ${reason}. It cannot be approved and stays open: reject it, and propose the change again on what main holds now if it is still wanted`,
  );
}

/**
 * ForbiddenError for the credential that proposed the change: the same key or one made from it by rotation,
 * or the same person's session. Keys are told apart by id, since hand-made bootstrap keys may share a prefix;
 * a key's proposal made before proposals recorded the key's id is told by the key's prefix, all it recorded.
 */
function refuseProposer(ws: Workspace, record: ProposalRecord): void {
  const { id, proposedBy } = record.proposal;
  const { principal } = ws;
  if (principal.kind !== 'session' && record.proposerKeyId !== undefined) {
    if (ws.deps.keys.sameCredential(ws.org, principal.keyId, record.proposerKeyId))
      throw new ForbiddenError(
        `this key is the key that proposed ${id} or one made from it by rotation, so it may not approve it; it needs ${APPROVERS}`,
      );
    return;
  }
  if (authorIdentity(ws.actor, ws.now()).email === record.proposerEmail)
    throw new ForbiddenError(`the credential that proposed ${id} may not approve it; it needs ${APPROVERS}`);
  const prefix = proposedBy.keyPrefix;
  if (prefix !== undefined && principal.kind !== 'session' && ws.deps.keys.sameCredentialAsPrefix(ws.org, principal.keyId, prefix))
    throw new ForbiddenError(
      `this key is the key that proposed ${id} (${prefix}…) or one made from it by rotation, so it may not approve it; it needs ${APPROVERS}`,
    );
}

/** What a proposal's commits name besides the actor: the project, flag, environments or segment it changes. */
function subjectTrailers(proposal: Proposal) {
  return {
    project: proposal.projectSlug,
    flag: proposal.flagKey ?? undefined,
    environment: proposal.environment ?? undefined,
    fromEnvironment: proposal.fromEnvironment,
    segment: proposal.segmentKey,
  };
}

/** The files as the proposal's commit has them (null: it deletes the file). */
function proposedContents(ws: Workspace, paths: ReadonlyArray<{ path: string; newOid?: string }>) {
  return paths.map(async (p) => ({ path: p.path, content: p.newOid === undefined ? null : await ws.repo.readBlob(p.newOid) }));
}

/** Closes an open proposal without applying it: a commit on its branch that changes no file, with the reason. */
export async function rejectProposal(ws: Workspace, id: string, reason?: string): Promise<Proposal> {
  const record = await proposalRecord(ws, id);
  const { proposal } = record;
  authorizeDecision(ws, proposal);
  refuseDecided(proposal);
  const text = reason?.trim();
  await ws.repo.recordOnBranch(
    record.ref,
    record.tip,
    {
      action: 'proposal_reject',
      summary: `reject proposal ${id}`,
      body: text ? `reason: ${text}` : undefined,
      actor: ws.actor,
      ...subjectTrailers(proposal),
      proposal: { id },
    },
    async () => {
      await refuseDecidedSince(ws, record);
    },
  );
  return (await proposalRecord(ws, id)).proposal;
}
