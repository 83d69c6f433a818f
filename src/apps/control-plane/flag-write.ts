import type { AuditAction, EnvironmentName } from '@flagops/core';
import { InvalidInRepositoryError } from '../../foundations/errors/kinds.js';
import { invalidFile } from '../../foundations/repository/held-units.js';
import { type FlagRef, flagById } from '../../foundations/repository/state-lookup.js';
import { type Change, type FileChange, heldBackBy, type ServedState } from '../../foundations/storage/index.js';
import { type FlagView, servedFlagView } from './views.js';
import type { Workspace } from './workspace.js';

/** What an edit of one flag writes; null when the request changes nothing (no commit is made). */
export interface FlagEdit {
  changes: FileChange[];
  summary: string;
  environment?: EnvironmentName;
  fromEnvironment?: EnvironmentName;
  body?: string;
}

export interface FlagWriteResult {
  /** The flag as served after the write. */
  ref: FlagRef;
  view: FlagView;
  committed: boolean;
}

/**
 * One commit editing one flag, found by id in what main's head serves. `edit` runs inside
 * FlagRepository.update, so it is re-run when main moved meanwhile: every check (existence, expectedVersion)
 * belongs in it. An edit that would commit something to a flag an invalid file holds back is refused (409
 * invalid_in_repository); one that changes nothing is not. Waits until evaluation serves the commit, so the
 * caller reads its change back at once.
 */
export async function writeFlag(
  ws: Workspace,
  flagId: string,
  action: AuditAction,
  edit: (ref: FlagRef, now: Date) => FlagEdit | null,
  /** Runs on the planned change before it is committed, on the head it goes on (a budget's check); throwing aborts. */
  check?: (served: ServedState, change: Change<null>) => Promise<void>,
): Promise<FlagWriteResult> {
  const outcome = await ws.repo.update(async (_committed, head) => {
    const served = await ws.readServed(head);
    const change = flagChange(ws, served, flagId, action, edit);
    await check?.(served, change);
    return change;
  });
  if (outcome.committed) await ws.served();
  const served = await ws.readServed(outcome.commit);
  const ref = flagById(served.state, flagId);
  return { ref, view: servedFlagView(served, ref), committed: outcome.committed };
}

/**
 * The commit an edit of one flag makes on `served` (main's head, or the head a proposal branches from): what
 * `writeFlag` commits on main and what a proposal puts on its branch.
 */
export function flagChange(
  ws: Workspace,
  served: ServedState,
  flagId: string,
  action: AuditAction,
  edit: (ref: FlagRef, now: Date) => FlagEdit | null,
): Change<null> {
  const ref = flagById(served.state, flagId);
  const slug = ref.project.project.slug;
  const key = ref.flag.meta.key;
  const planned = edit(ref, ws.now());
  if (planned && planned.changes.length > 0) refuseHeldBack(served, slug, key);
  return {
    changes: planned?.changes ?? [],
    meta: {
      action,
      summary: planned?.summary ?? action,
      body: planned?.body,
      actor: ws.actor,
      project: slug,
      flag: key,
      environment: planned?.environment,
      fromEnvironment: planned?.fromEnvironment,
    },
    result: null,
  };
}

/**
 * Refuses a write to a flag (or, without `key`, to a project) that an invalid file on main holds back: it
 * would be committed and not served, so nothing is committed until the file is fixed. Kills never ask.
 */
export function refuseHeldBack(served: ServedState, slug: string, key?: string): void {
  const held = heldBackBy(served, slug, key);
  if (held.length === 0) return;
  throw new InvalidInRepositoryError(key === undefined ? `project "${slug}"` : `flag "${key}"`, held.map(invalidFile));
}
