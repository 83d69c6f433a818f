import { ACTOR_TYPES, type Actor, AUDIT_ACTIONS, type AuditAction, type EnvironmentName, isEnvironmentName } from '@flagops/core';
import { oneLine, printableLines } from '../../validation/one-line.js';

/**
 * Commit messages as docs/architecture.md "Commits and trailers" fixes them: a one-line summary, a blank line,
 * an optional free-text body (each of its paragraphs folded into one), a blank line and `Flagops-*` git trailers that the
 * audit trail reads back.
 */

export interface CommitMeta {
  action: AuditAction;
  /** One line; line breaks are folded to spaces. */
  summary: string;
  /**
   * Free text, e.g. the reason of a kill, or its paragraphs kept apart: each is written as one paragraph of the
   * message whatever lines it holds, and read back as written (trimmed).
   */
  body?: string | readonly string[];
  actor: Actor;
  project?: string;
  flag?: string;
  environment?: EnvironmentName;
  fromEnvironment?: EnvironmentName;
  /** The segment a segment_update or segment_delete changed. */
  segment?: string;
  /**
   * A proposal's change (on its branch, with the id of the key that proposed it: prefixes of hand-made keys
   * may agree, ids never do), its rejection, or its approval on main (with who proposed it).
   */
  proposal?: { id: string; proposedBy?: ProposalActor; proposerKeyId?: string; budget?: ProposalBudget };
  /**
   * A kill or cleared kill made again (by another control plane from its record, or on the git remote's newer
   * head): the commit that first made it, so that it is never made twice, nor after what came later.
   */
  madeFrom?: string;
}

/**
 * On a proposal's change: it waits because it is past a budget of the proposer's actor type in its environment
 * (not because the environment requires approval), with the figures of that moment.
 */
export interface ProposalBudget {
  movedPctPerHour: number;
  usedPct: number;
  addsPct: number;
}

/** Who proposed a change, as trailers name them. */
export interface ProposalActor {
  type: Actor['type'];
  name?: string;
  keyPrefix?: string;
  /** Sessions: the role the person acted with (`editor@shop`). */
  role?: string;
}

export interface GitTrailer {
  key: string;
  value: string;
}

/** What the `Flagops-*` trailers of a commit say; null for a commit written by someone else. */
export interface FlagopsTrailers {
  action: AuditAction;
  project?: string;
  flag?: string;
  environment?: EnvironmentName;
  fromEnvironment?: EnvironmentName;
  segment?: string;
  actor: { type: Actor['type']; name?: string; keyPrefix?: string; role?: string };
  /** `Flagops-Proposal`: the proposal this commit opens, rejects or (on main) applies. */
  proposalId?: string;
  /** On main: who proposed the change this commit applies. */
  proposedBy?: ProposalActor;
  /** On a proposal's change made with a key (`Flagops-Proposed-By-Key-Id`): that key's id. */
  proposerKeyId?: string;
  /** On a proposal's change kept for a budget (`Flagops-Proposal-Reason: budget`). */
  budget?: ProposalBudget;
  /** `Flagops-Made-From`: the commit that first made the kill or cleared kill this one makes again. */
  madeFrom?: string;
}

export interface ParsedMessage {
  summary: string;
  /** The body as written: its paragraphs, unfolded, joined by a blank line. */
  body: string;
  /** The paragraphs of the body as the message separates them, each as written (one may hold blank lines). */
  bodyParagraphs: string[];
  trailers: GitTrailer[];
}

export function formatCommitMessage(meta: CommitMeta): string {
  const trailers: Array<[string, string | undefined]> = [
    ['Flagops-Action', meta.action],
    ['Flagops-Project', meta.project],
    ['Flagops-Flag', meta.flag],
    ['Flagops-Environment', meta.environment],
    ['Flagops-From-Environment', meta.fromEnvironment],
    ['Flagops-Segment', meta.segment],
    ['Flagops-Actor-Type', meta.actor.type],
    ['Flagops-Actor', meta.actor.name],
    ['Flagops-Key-Prefix', meta.actor.keyPrefix],
    ['Flagops-Actor-Role', meta.actor.role],
    ['Flagops-Proposal', meta.proposal?.id],
    ['Flagops-Proposed-By-Type', meta.proposal?.proposedBy?.type],
    ['Flagops-Proposed-By', meta.proposal?.proposedBy?.name],
    ['Flagops-Proposed-By-Key-Prefix', meta.proposal?.proposedBy?.keyPrefix],
    ['Flagops-Proposed-By-Role', meta.proposal?.proposedBy?.role],
    ['Flagops-Proposed-By-Key-Id', meta.proposal?.proposerKeyId],
    ['Flagops-Proposal-Reason', meta.proposal?.budget ? 'budget' : undefined],
    ['Flagops-Budget-Per-Hour', meta.proposal?.budget ? String(meta.proposal.budget.movedPctPerHour) : undefined],
    ['Flagops-Budget-Used', meta.proposal?.budget ? String(meta.proposal.budget.usedPct) : undefined],
    ['Flagops-Budget-Adds', meta.proposal?.budget ? String(meta.proposal.budget.addsPct) : undefined],
    ['Flagops-Made-From', meta.madeFrom],
  ];
  const block = trailers
    .filter((t): t is [string, string] => t[1] !== undefined && oneLine(t[1]) !== '')
    .map(([key, value]) => `${key}: ${oneLine(value)}`)
    .join('\n');
  const paragraphs = typeof meta.body === 'string' ? [meta.body] : (meta.body ?? []);
  const body = paragraphs
    .map((paragraph) => printableLines(paragraph).trim())
    .filter((paragraph) => paragraph !== '')
    .map(foldBody)
    .join('\n\n');
  const summary = oneLine(meta.summary) || meta.action;
  return body ? `${summary}\n\n${body}\n\n${block}\n` : `${summary}\n\n${block}\n`;
}

const TRAILER_LINE = /^([A-Za-z0-9][A-Za-z0-9-]*):\s?(.*)$/;

/**
 * Splits a message into summary, body and trailers. The trailers are the last paragraph when every line of
 * it is `Key: value` (or a continuation indented below one), as `git interpret-trailers` reads them.
 */
export function parseCommitMessage(message: string): ParsedMessage {
  const text = message.replace(/\r\n?/g, '\n').replace(/\n+$/, '');
  const paragraphs = text.split(/\n[ \t]*\n/);
  const summary = (paragraphs.shift() ?? '').trim();
  let trailers: GitTrailer[] = [];
  if (paragraphs.length > 0) {
    const parsed = parseTrailerParagraph(paragraphs[paragraphs.length - 1]);
    if (parsed) {
      trailers = parsed;
      paragraphs.pop();
    }
  }
  const bodyParagraphs = paragraphs.map((p) => unfoldParagraph(p.trim())).filter((p) => p !== '');
  return { summary, body: bodyParagraphs.join('\n\n'), bodyParagraphs, trailers };
}

/** How the lines of a body after its first are indented, as Debian control files fold text. */
const FOLD_INDENT = '  ';
/** A line a folded body writes with one more dot: empty, spaces, dots, or spaces then dots. */
const FOLDS_WITH_DOT = /^[ \t]*\.*$/;
/** Such a line as written: read back without its last dot. */
const FOLDED_WITH_DOT = /^[ \t]*\.+$/;

/**
 * A paragraph of the body as one paragraph of the message: every line after the first indented, a blank line (or one of only spaces) written
 * with a `.`, and one of only spaces and dots with one dot more. A blank line, or to git one of only spaces,
 * ends a paragraph, and git reads trailers from the last one: a body written as given (a kill's reason is
 * anyone's text) was read back cut at its first blank line, and could show `Flagops-*` lines of its own in
 * `git log`, set apart like ours.
 */
function foldBody(paragraph: string): string {
  const [first, ...rest] = paragraph.split('\n');
  const folded = rest.map((line) => FOLD_INDENT + (FOLDS_WITH_DOT.test(line) ? `${line}.` : line));
  return [first, ...folded].join('\n');
}

/**
 * A paragraph of a body as foldBody wrote it, read back. One with a line after its first not indented was
 * not folded (an engineer's message, a body written before bodies were folded): it reads as it is.
 */
function unfoldParagraph(paragraph: string): string {
  const [first, ...rest] = paragraph.split('\n');
  if (rest.length === 0 || !rest.every((line) => line.startsWith(FOLD_INDENT))) return paragraph;
  const lines = rest.map((indented) => {
    const line = indented.slice(FOLD_INDENT.length);
    return FOLDED_WITH_DOT.test(line) ? line.slice(0, -1) : line;
  });
  return [first, ...lines].join('\n');
}

function parseTrailerParagraph(paragraph: string): GitTrailer[] | null {
  const trailers: GitTrailer[] = [];
  for (const line of paragraph.split('\n')) {
    const last = trailers[trailers.length - 1];
    if (/^[ \t]/.test(line) && last) {
      last.value = `${last.value} ${line.trim()}`;
      continue;
    }
    const m = TRAILER_LINE.exec(line);
    if (!m) return null;
    trailers.push({ key: m[1], value: m[2].trim() });
  }
  return trailers.length > 0 ? trailers : null;
}

/** Reads the `Flagops-*` trailers; null unless the commit names a known action and actor type. */
export function readFlagopsTrailers(trailers: readonly GitTrailer[]): FlagopsTrailers | null {
  const get = (key: string) => {
    const wanted = key.toLowerCase();
    // The last one wins, as when git reads a repeated trailer into a single value.
    const found = [...trailers].reverse().find((t) => t.key.toLowerCase() === wanted)?.value;
    return found === '' ? undefined : found;
  };
  const action = get('Flagops-Action');
  const actorType = get('Flagops-Actor-Type');
  if (!action || !(AUDIT_ACTIONS as readonly string[]).includes(action)) return null;
  if (!actorType || !(ACTOR_TYPES as readonly string[]).includes(actorType)) return null;
  const environment = get('Flagops-Environment');
  const fromEnvironment = get('Flagops-From-Environment');
  const result: FlagopsTrailers = { action: action as AuditAction, actor: { type: actorType as Actor['type'] } };
  const project = get('Flagops-Project');
  const flag = get('Flagops-Flag');
  const name = get('Flagops-Actor');
  const keyPrefix = get('Flagops-Key-Prefix');
  const segment = get('Flagops-Segment');
  if (project) result.project = project;
  if (segment) result.segment = segment;
  if (flag) result.flag = flag;
  if (isEnvironmentName(environment)) result.environment = environment;
  if (isEnvironmentName(fromEnvironment)) result.fromEnvironment = fromEnvironment;
  if (name) result.actor.name = name;
  if (keyPrefix) result.actor.keyPrefix = keyPrefix;
  const role = get('Flagops-Actor-Role');
  if (role) result.actor.role = role;
  const proposalId = get('Flagops-Proposal');
  if (proposalId) result.proposalId = proposalId;
  const proposerType = get('Flagops-Proposed-By-Type');
  if (proposerType && (ACTOR_TYPES as readonly string[]).includes(proposerType)) {
    const proposedBy: ProposalActor = { type: proposerType as Actor['type'] };
    const proposerName = get('Flagops-Proposed-By');
    const proposerPrefix = get('Flagops-Proposed-By-Key-Prefix');
    const proposerRole = get('Flagops-Proposed-By-Role');
    if (proposerName) proposedBy.name = proposerName;
    if (proposerPrefix) proposedBy.keyPrefix = proposerPrefix;
    if (proposerRole) proposedBy.role = proposerRole;
    result.proposedBy = proposedBy;
  }
  const proposerKeyId = get('Flagops-Proposed-By-Key-Id');
  if (proposerKeyId) result.proposerKeyId = proposerKeyId;
  if (get('Flagops-Proposal-Reason') === 'budget') {
    const figure = (key: string) => {
      const value = Number(get(key));
      return Number.isFinite(value) ? value : 0;
    };
    result.budget = {
      movedPctPerHour: figure('Flagops-Budget-Per-Hour'),
      usedPct: figure('Flagops-Budget-Used'),
      addsPct: figure('Flagops-Budget-Adds'),
    };
  }
  const madeFrom = get('Flagops-Made-From');
  if (madeFrom && /^[0-9a-f]{40}$/.test(madeFrom)) result.madeFrom = madeFrom;
  return result;
}
