import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';
import type { CountedEvents, ParsedEvents } from '../../features/stats/event-counts.js';
import type { AuthGuard } from '../../foundations/auth/auth-guard.js';
import { bearerToken, keyPrefix, kindOfKey } from '../../foundations/auth/key-format.js';
import { FlagopsError, NotFoundError, UnauthorizedError } from '../../foundations/errors/kinds.js';
import { readJsonBody } from '../../foundations/http/read-json-body.js';
import type { FastPath } from '../../foundations/http/serve.js';
import type { Logger } from '../../foundations/log/logger.js';
import type { EvaluationTotals } from '../../foundations/metrics/evaluation-totals.js';
import { viewCountRules } from '../eval-server/count-rules.js';
import { parseCountReport } from '../eval-server/counts.js';
import type { EnvironmentView } from '../eval-server/environment-view.js';
import { evalServerFastPath, type RequestTimer } from '../eval-server/fast-path.js';
import { createRoutedApp, type EvalRoutes } from '../eval-server/routed-app.js';
import { changesFor } from '../eval-server/snapshot-changes.js';
import { type StreamHub, streamClientVersion, streamRequestKey } from '../eval-server/stream.js';
import { evaluationRoutes } from '../eval-server/view-routes.js';
import { recorderPerView, type ViewSource } from '../eval-server/view-source.js';
import type { ReplicaCounts } from './replica-counts.js';
import type { ReplicaHolder } from './replica-holder.js';
import type { ReplicaKeys, SdkVerdict } from './replica-keys.js';

export interface ReplicaAppDeps {
  holder: ReplicaHolder;
  keys: ReplicaKeys;
  counts: ReplicaCounts;
  hub: StreamHub;
  /** Throttles, logs and counts wrong keys per client address. */
  guard: AuthGuard;
  /** Evaluations for /metrics, and the timing of what the fast path answers; absent with FLAGOPS_METRICS=off. */
  totals?: EvaluationTotals;
  timer?: RequestTimer;
  logger: Logger;
  health: (req: IncomingMessage) => { status: number; body: unknown };
}

interface ServedDeps extends ReplicaAppDeps {
  source: ViewSource;
}

const replicaRoutes: EvalRoutes<ServedDeps> = evaluationRoutes<ServedDeps>({ stream, counts });

/**
 * The evaluation API of a replica: the main server's endpoints (/v1/evaluate, /v1/snapshot, /v1/stream,
 * /v1/counts, /v1/events, OFREP, /healthz) with its request parsing, evaluation core, ETags and stream hub; only where
 * keys and views come from differs (ReplicaKeys, ReplicaHolder).
 */
export function createReplicaApp(deps: ReplicaAppDeps): Koa {
  return createRoutedApp<ServedDeps>({ ...deps, source: replicaViewSource(deps) }, deps.logger, replicaRoutes);
}

/** A replica's POST /v1/evaluate and GET /v1/snapshot without Koa, as on the main server. */
export function replicaFastPath(deps: ReplicaAppDeps): FastPath {
  return evalServerFastPath(replicaViewSource(deps), deps.logger, deps.timer);
}

/** Views from what this replica synced; counts batched for upstream's stats. */
function replicaViewSource(deps: ReplicaAppDeps): ViewSource {
  return {
    view: (req) => viewOf(bearerToken(req.headers.authorization), req, deps),
    changes: changesFor(deps.holder),
    events: (view, events) => forwardEvents(view, events, deps),
    recorder: recorderPerView((view) => {
      const total = deps.totals?.counter(view.org, view.projectSlug, view.environment);
      if (total === undefined) return (flagKey, variation) => deps.counts.record(view.projectId, view.environment, flagKey, variation);
      return (flagKey, variation, reason) => {
        deps.counts.record(view.projectId, view.environment, flagKey, variation);
        total(flagKey, variation, reason);
      };
    }),
  };
}

/** Events checked here as on the main server, forwarded with the counts, in the same batches (counted once upstream). */
function forwardEvents(view: EnvironmentView, events: ParsedEvents, deps: ReplicaAppDeps): CountedEvents {
  let accepted = 0;
  for (const e of events.exposures) {
    deps.counts.addExposure(view.projectId, view.environment, e.flagKey, e.variation, e.hourStartMs, e.count);
    accepted += e.count;
  }
  let dropped = 0;
  for (const t of events.track) {
    if (deps.counts.addTrack(view.projectId, view.environment, t.name, t.hourStartMs, t.count, t.sumMicros)) accepted += t.count;
    else dropped += t.count;
  }
  deps.totals?.events.record(view.org, view.projectSlug, view.environment, events);
  if (dropped > 0) deps.totals?.events.recordDropped(view.org, view.projectSlug, view.environment, dropped);
  // Upstream may drop more: names past the project's bound there, when the batch arrives.
  return { accepted, dropped };
}

async function viewOf(rawKey: string | null, req: IncomingMessage, deps: ReplicaAppDeps): Promise<EnvironmentView> {
  const verdict = (rawKey !== null && deps.keys.known(rawKey)) || (await verifyNewKey(rawKey, req, deps));
  // Before its first sync (nothing on disk either) a replica serves nothing yet: retry, rather than a 404.
  if (deps.holder.org === null)
    throw new FlagopsError('unavailable', 'the replica has not synced with the control plane yet; try again shortly');
  const view = deps.holder.view(deps.holder.org, verdict.projectId, verdict.environment);
  // A view whose saved file was damaged is one the replica has not synced yet, not one that is gone.
  if (!view && deps.holder.isLost(verdict.projectId, verdict.environment))
    throw new FlagopsError(
      'unavailable',
      "the replica's saved snapshot of this environment was damaged and it has not fetched it from the control plane yet; try again shortly",
    );
  if (!view) throw new NotFoundError(`project ${verdict.projectId} of this sdk key`);
  return view;
}

/** A key this replica has not seen: asked upstream, a wrong one counting against the request's address. */
async function verifyNewKey(rawKey: string | null, req: IncomingMessage, deps: ReplicaAppDeps): Promise<SdkVerdict> {
  if (rawKey === null) throw new UnauthorizedError();
  const hint = kindOfKey(rawKey) === null ? {} : { keyPrefix: keyPrefix(rawKey) };
  // A refusal counts against the address; its reason (a rotated key's) is still the answer.
  let refusal: UnauthorizedError | undefined;
  const verdict = await deps.guard.checkKey(req, 'evaluation', hint, () =>
    deps.keys.verify(rawKey).catch((err: unknown) => {
      if (!(err instanceof UnauthorizedError)) throw err;
      refusal = err;
      return null;
    }),
  );
  if (verdict === null) throw refusal ?? new UnauthorizedError();
  return verdict;
}

async function stream(ctx: Koa.Context, deps: ReplicaAppDeps): Promise<void> {
  const rawKey = streamRequestKey(ctx);
  const view = await viewOf(rawKey, ctx.req, deps);
  if (ctx.method === 'HEAD') {
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    return;
  }
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.respond = false;
  ctx.res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'close',
    'X-Accel-Buffering': 'no',
  });
  deps.hub.open(ctx.res, view, () => (rawKey === null ? Number.NEGATIVE_INFINITY : deps.keys.validUntil(rawKey)), streamClientVersion(ctx));
}

async function counts(ctx: Koa.Context, deps: ReplicaAppDeps): Promise<void> {
  const view = await viewOf(bearerToken(ctx.get('authorization')), ctx.req, deps);
  const { entries, ignored } = parseCountReport(await readJsonBody(ctx.req), viewCountRules(view, Date.now()));
  for (const e of entries) deps.counts.add(view.projectId, view.environment, e.flagKey, e.variation, e.hourStartMs, e.count);
  ctx.status = 202;
  ctx.body = ignored > 0 ? { accepted: entries.length, ignored } : { accepted: entries.length };
}
