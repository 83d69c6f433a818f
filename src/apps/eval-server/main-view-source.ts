import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';
import { type EvaluationCounter, statsScope } from '../../features/stats/evaluation-counter.js';
import { addEventCells, type TrackNameBound } from '../../features/stats/event-counts.js';
import { bearerToken } from '../../foundations/auth/key-format.js';
import type { KeyService } from '../../foundations/auth/key-service.js';
import { NotFoundError, StartingError, StorageFaultError } from '../../foundations/errors/kinds.js';
import type { Logger } from '../../foundations/log/logger.js';
import type { EvaluationTotals } from '../../foundations/metrics/evaluation-totals.js';
import type { EnvironmentView } from './environment-view.js';
import type { RequestTimer } from './fast-path.js';
import { changesFor } from './snapshot-changes.js';
import type { SnapshotHolder } from './snapshot-holder.js';
import { recorderPerView, type ViewSource } from './view-source.js';

export interface EvalAppDeps {
  keys: KeyService;
  holder: SnapshotHolder;
  counter: EvaluationCounter;
  /** Which track event names the counter keeps; the same one for every user of the counter. */
  trackNames: TrackNameBound;
  /** Evaluations for /metrics, and the timing of what the fast path answers; absent with FLAGOPS_METRICS=off. */
  totals?: EvaluationTotals;
  timer?: RequestTimer;
  logger: Logger;
  health: (req: IncomingMessage) => { status: number; body: unknown };
}

/** The SDK key fixes organisation, project and environment: a request can name no other. */
export function viewFor(ctx: Koa.Context, deps: Pick<EvalAppDeps, 'keys' | 'holder'>): EnvironmentView {
  return viewForRequest(ctx.req, deps);
}

function viewForRequest(req: IncomingMessage, deps: Pick<EvalAppDeps, 'keys' | 'holder'>): EnvironmentView {
  return viewForKey(bearerToken(req.headers.authorization), req, deps);
}

/**
 * The view an SDK key (null: none sent) presented by `req` fixes; 503 until the key's organisation serves a
 * state of main (keys are known before that), as a 404 would tell clients the project does not exist.
 */
export function viewForKey(rawKey: string | null, req: IncomingMessage, deps: Pick<EvalAppDeps, 'keys' | 'holder'>): EnvironmentView {
  const principal = deps.keys.evaluationPrincipal(rawKey, req);
  const view = deps.holder.view(principal.org, principal.projectId!, principal.environment!);
  if (view) return view;
  // Nothing served for the project because its repository cannot be read: it may well exist, so never a 404.
  const fault = deps.holder.fault(principal.org);
  if (fault?.kind === 'read') throw new StorageFaultError('read', fault.message);
  if (!deps.holder.servesMain(principal.org))
    throw deps.holder.noState(principal.org) ?? new StartingError('the evaluation server is starting; try again shortly');
  throw new NotFoundError(`project ${principal.projectId} of this sdk key`);
}

/** Views from this server's keys and snapshot holder; counts into the stats of the view's environment (and the metrics). */
export function mainViewSource(deps: Pick<EvalAppDeps, 'keys' | 'holder' | 'counter' | 'trackNames' | 'totals'>): ViewSource {
  return {
    view: (req) => viewForRequest(req, deps),
    changes: changesFor(deps.holder),
    events: (view, events) => {
      deps.totals?.events.record(view.org, view.projectSlug, view.environment, events);
      const scope = statsScope(view.org, view.projectId, view.environment);
      const counted = addEventCells(deps.counter, deps.trackNames, scope, events.exposures, events.track);
      if (counted.dropped > 0) deps.totals?.events.recordDropped(view.org, view.projectSlug, view.environment, counted.dropped);
      return counted;
    },
    recorder: recorderPerView((view) => {
      const scope = statsScope(view.org, view.projectId, view.environment);
      const total = deps.totals?.counter(view.org, view.projectSlug, view.environment);
      if (total === undefined) return (flagKey, variation) => deps.counter.record(scope, flagKey, variation);
      return (flagKey, variation, reason) => {
        deps.counter.record(scope, flagKey, variation);
        total(flagKey, variation, reason);
      };
    }),
  };
}
