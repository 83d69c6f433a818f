import type Koa from 'koa';
import type { FastPath } from '../../foundations/http/serve.js';
import { countsRoute } from './counts.js';
import { evalServerFastPath } from './fast-path.js';
import { type EvalAppDeps, mainViewSource } from './main-view-source.js';
import { createRoutedApp, type EvalRoutes } from './routed-app.js';
import { streamRoute } from './stream.js';
import { evaluationRoutes } from './view-routes.js';
import type { ViewSource } from './view-source.js';

export type { EvalAppDeps };

/** What the main server's routes get: its services, and the view source built on them once. */
export interface ServedDeps extends EvalAppDeps {
  source: ViewSource;
}

export const coreRoutes: EvalRoutes<ServedDeps> = evaluationRoutes<ServedDeps>({
  stream: streamRoute,
  counts: countsRoute,
});

/**
 * The evaluation API (docs/evaluation-server.md) as a Koa app. The service listens with evalFastPath in
 * front of it, which answers evaluate and snapshot requests first; the app answers them the same way.
 */
export function createEvalApp(deps: EvalAppDeps, routes: EvalRoutes<ServedDeps> = coreRoutes): Koa {
  return createRoutedApp<ServedDeps>({ ...deps, source: mainViewSource(deps) }, deps.logger, routes);
}

/** The main server's POST /v1/evaluate and GET /v1/snapshot without Koa (src/apps/eval-server/fast-path.ts). */
export function evalFastPath(deps: EvalAppDeps): FastPath {
  return evalServerFastPath(mainViewSource(deps), deps.logger, deps.timer);
}
