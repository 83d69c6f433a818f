import type { CreatedKey, KeyView } from '../../auth/principal.js';
import type { KeyCreateBody } from '../../validation/api-bodies.js';
import type { Workspace } from '../http/workspace.js';
import { projectById } from '../state-lookup.js';

/** An sdk key is scoped to a project of the caller's organisation: another organisation's project is 404. */
export async function createKey(ws: Workspace, body: KeyCreateBody): Promise<CreatedKey> {
  if (body.kind === 'sdk') {
    const { state } = await ws.repo.readServed();
    projectById(state, body.projectId!);
  }
  return ws.deps.keys.createKey(ws.org, body);
}

export function listKeys(ws: Workspace): KeyView[] {
  return ws.deps.keys.listKeys(ws.org);
}

export function revokeKey(ws: Workspace, id: string): Promise<KeyView> {
  return ws.deps.keys.revokeKey(ws.org, id);
}
