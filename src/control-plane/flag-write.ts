import type { EnvironmentName } from '../model/environments.js';
import type { AuditAction } from '../model/types.js';
import type { FileChange } from '../storage/prepare-change.js';
import type { Workspace } from './http/workspace.js';
import { type FlagRef, flagById } from './state-lookup.js';

/** What an edit of one flag writes; null when the request changes nothing (no commit is made). */
export interface FlagEdit {
  changes: FileChange[];
  summary: string;
  environment?: EnvironmentName;
  fromEnvironment?: EnvironmentName;
  body?: string;
}

export interface FlagWriteResult {
  /** The flag as it is on main after the write. */
  ref: FlagRef;
  committed: boolean;
}

/**
 * One commit editing one flag, found by id on the head the edit runs on. `edit` runs inside
 * FlagRepository.update, so it is re-run when main moved meanwhile: every check (existence, expectedVersion)
 * belongs in it. Waits until evaluation serves the commit, so the caller reads its change back at once.
 */
export async function writeFlag(
  ws: Workspace,
  flagId: string,
  action: AuditAction,
  edit: (ref: FlagRef, now: Date) => FlagEdit | null,
): Promise<FlagWriteResult> {
  const outcome = await ws.repo.update((state) => {
    const ref = flagById(state, flagId);
    const slug = ref.project.project.slug;
    const key = ref.flag.meta.key;
    const planned = edit(ref, ws.now());
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
  });
  if (outcome.committed) await ws.served();
  return { ref: flagById(outcome.state, flagId), committed: outcome.committed };
}
