import type Koa from 'koa';
import { readJsonBody } from '../http/read-json-body.js';
import { evaluateAnswer } from './evaluate-answer.js';
import { sendSnapshot } from './send-snapshot.js';
import type { ViewSource } from './view-source.js';

/**
 * POST /v1/evaluate and GET /v1/snapshot through Koa, for the requests the fast path (fast-path.ts) leaves to
 * the app, such as those with a query string: the same answers.
 */
export async function evaluateRoute(ctx: Koa.Context, deps: { source: ViewSource }): Promise<void> {
  const view = await deps.source.view(ctx.get('authorization'));
  ctx.type = 'application/json';
  ctx.body = evaluateAnswer(view, await readJsonBody(ctx.req), deps.source.recorder(view));
}

export async function snapshotRoute(ctx: Koa.Context, deps: { source: ViewSource }): Promise<void> {
  sendSnapshot(ctx, await deps.source.view(ctx.get('authorization')));
}
