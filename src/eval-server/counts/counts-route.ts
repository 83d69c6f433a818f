import type Koa from 'koa';
import { readJsonBody } from '../../http/read-json-body.js';
import { statsScope } from '../../stats/stats-scope.js';
import { type EvalAppDeps, viewFor } from '../eval-app.js';
import { parseCountReport } from './counts-request.js';

/**
 * POST /v1/counts: evaluation counts an SDK made locally, added to the same hourly stats the server's own
 * evaluations feed. 202: the counts are in memory and reach the disk with the next stats flush.
 */
export async function countsRoute(ctx: Koa.Context, deps: EvalAppDeps): Promise<void> {
  const view = viewFor(ctx, deps);
  const entries = parseCountReport(await readJsonBody(ctx.req), { hasFlag: (key) => view.compiled.has(key), now: Date.now() });
  const scope = statsScope(view.org, view.projectId, view.environment);
  let accepted = 0;
  for (const e of entries) if (deps.counter.add(scope, e.flagKey, e.variation, e.hourStartMs, e.count)) accepted++;
  ctx.status = 202;
  ctx.body = { accepted };
}
