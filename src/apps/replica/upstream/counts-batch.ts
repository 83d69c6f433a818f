import { isEnvironmentName } from '@flagops/core';
import { statsScope } from '../../../features/stats/evaluation-counter.js';
import { InvalidInputError, NotFoundError } from '../../../foundations/errors/kinds.js';
import { parseCountReport, viewCountRules } from '../../eval-server/counts.js';
import type { SnapshotHolder } from '../../eval-server/snapshot-holder.js';

export interface BatchEntry {
  scope: string;
  flagKey: string;
  variation: string;
  hourStartMs: number;
  count: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A replica's counts batch: `{ batchId, scopes: [{ projectId, environment, counts: [...] }] }`, each scope's
 * `counts` in the format of POST /v1/counts and checked by the same parser. Checked whole before anything
 * is counted, so a refused batch left nothing behind.
 */
export function countsBatch(body: unknown, org: string, holder: SnapshotHolder): { batchId: string; entries: BatchEntry[] } {
  if (!isObject(body)) throw new InvalidInputError('the body must be { batchId, scopes }', 'body');
  const { batchId, scopes } = body;
  if (typeof batchId !== 'string' || !/^[A-Za-z0-9-]{8,64}$/.test(batchId))
    throw new InvalidInputError('batchId must be 8 to 64 letters, digits or dashes', 'batchId');
  if (!Array.isArray(scopes)) throw new InvalidInputError('scopes must be an array', 'scopes');
  const now = Date.now();
  const entries: BatchEntry[] = [];
  scopes.forEach((s, i) => {
    if (!isObject(s) || typeof s.projectId !== 'string' || !isEnvironmentName(s.environment)) {
      throw new InvalidInputError(`scopes[${i}] must be { projectId, environment, counts }`, `scopes[${i}]`);
    }
    const view = holder.view(org, s.projectId, s.environment);
    if (!view) throw new NotFoundError(`project ${s.projectId}`);
    const scope = statsScope(org, s.projectId, s.environment);
    // A replica adds up what it served and what SDKs reported to it (each report bounded there) for as long as
    // upstream was away: its entries are not bound per entry, only by what the stats can hold.
    const rules = { ...viewCountRules(view, now), maxCount: Number.MAX_SAFE_INTEGER };
    for (const e of parseCountReport({ counts: s.counts }, rules)) entries.push({ scope, ...e });
  });
  return { batchId, entries };
}
