import type { EvaluationCounter } from '../../../features/stats/evaluation-counter.js';
import { addEventCells, type TrackNameBound } from '../../../features/stats/event-counts.js';
import { bearerToken } from '../../../foundations/auth/key-format.js';
import type { KeyService } from '../../../foundations/auth/key-service.js';
import { can } from '../../../foundations/auth/permissions.js';
import { InvalidInputError, NotFoundError } from '../../../foundations/errors/kinds.js';
import { type ContentCoding, compress, countBodyBytes, negotiateCoding } from '../../../foundations/http/content-encoding.js';
import { EncodedBodies } from '../../../foundations/http/encoded-bodies.js';
import { encodedJsonHeaders, VARY_KEY_AND_ENCODING } from '../../../foundations/http/encoded-json.js';
import type { ReplicaBatchLedger } from '../../../foundations/state/index.js';
import type { RepositoryRegistry } from '../../../foundations/storage/repository-registry.js';
import { ANSWERED, type Reply, type Route, route } from '../../control-plane/route-table.js';
import type { EnvironmentView } from '../../eval-server/environment-view.js';
import { matchesEtag } from '../../eval-server/routed-app.js';
import { changesFor } from '../../eval-server/snapshot-changes.js';
import type { SnapshotHolder } from '../../eval-server/snapshot-holder.js';
import { viewBody } from '../replica-holder.js';
import { viewDeltaFor } from '../view-delta.js';
import { countsBatch } from './counts-batch.js';
import { openReplicaStream, servedListing, servedOrg } from './replica-views.js';

export interface ReplicaUpstreamDeps {
  keys: KeyService;
  repos: RepositoryRegistry;
  holder: SnapshotHolder;
  counter: EvaluationCounter;
  /** Which track event names the counter keeps: the main server's own, so both count against one bound. */
  trackNames: TrackNameBound;
  /** The ids of count batches already taken, kept across restarts. */
  batches: ReplicaBatchLedger;
}

/** The body of GET /api/v1/replica/snapshots/:projectId/:env, made and compressed once per view. */
const viewBodies = new EncodedBodies<EnvironmentView>((view) => JSON.stringify(viewBody(view)));

/** A JSON answer already in `coding`, counted for the metrics. */
function encodedReply(headers: Record<string, string>, body: string | Buffer, coding: ContentCoding): Reply {
  countBodyBytes(coding, typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  return { headers: { ...headers, Vary: VARY_KEY_AND_ENCODING, ...encodedJsonHeaders(coding) }, body };
}

/** What the composition root must call on stop: ends the replica streams so the server stops at once. */
export interface ReplicaUpstream {
  routes: Route[];
  close(): void;
}

/**
 * The control plane's side of evaluation replicas (docs/deployment.md): `/api/v1/replica/...`, for admin keys
 * (the route table's `replication` permission: a replica verifies any sdk key of the organisation and reads
 * every project, more than an agent key may). Replicas list and fetch the served views (with ETags), follow
 * the stream of new versions, verify sdk keys they have not seen, and hand in evaluation counts in idempotent
 * batches.
 */
export function replicaUpstream(deps: ReplicaUpstreamDeps): ReplicaUpstream {
  const streams = new Set<() => void>();
  const routes = [
    route({
      method: 'GET',
      path: '/api/v1/replica/snapshots',
      permission: 'replication',
      body: 'none',
      handle: async ({ ctx, principal: { org } }) => {
        const coding = negotiateCoding(ctx.get('accept-encoding'));
        const json = JSON.stringify(await servedListing(org, deps.repos, deps.holder));
        return encodedReply({}, coding === 'identity' ? json : await compress(json, coding, 'per-request'), coding);
      },
    }),
    route({
      method: 'GET',
      path: '/api/v1/replica/snapshots/:projectId/:env',
      permission: 'replication',
      body: 'none',
      handle: async ({ ctx, principal: { org }, params, environment }) => {
        await servedOrg(org, deps.holder);
        const view = deps.holder.view(org, params.projectId, environment);
        if (!view) throw new NotFoundError(`project ${params.projectId}`);
        const headers = { ETag: view.etag, 'Cache-Control': 'no-cache' };
        if (matchesEtag(ctx.get('if-none-match'), view.etag)) return { status: 304, headers: { ...headers, Vary: VARY_KEY_AND_ENCODING } };
        const coding = negotiateCoding(ctx.get('accept-encoding'));
        // ?since=: the delta from the version the replica serves, when still known (docs/deployment.md);
        // made for this request, so compressed for it alone. The whole view is compressed once per version.
        const delta = viewDeltaFor(view, ctx.query.since, changesFor(deps.holder));
        if (delta === undefined) return encodedReply(headers, await viewBodies.get(view, coding), coding);
        const json = JSON.stringify(delta);
        return encodedReply(headers, coding === 'identity' ? json : await compress(json, coding, 'per-request'), coding);
      },
    }),
    route({
      method: 'GET',
      path: '/api/v1/replica/stream',
      permission: 'replication',
      body: 'none',
      handle: async ({ ctx, principal: { org } }) => {
        const rawKey = bearerToken(ctx.get('authorization'));
        const stillAuthorized = () => {
          const now = rawKey === null ? null : deps.keys.authenticate(rawKey);
          return now !== null && now.org === org && can(now, 'replication');
        };
        openReplicaStream(
          ctx,
          await servedListing(org, deps.repos, deps.holder),
          deps.holder,
          streams,
          (listener) => deps.keys.onKeysChanged(listener),
          stillAuthorized,
        );
        return ANSWERED;
      },
    }),
    // The replica sends an sdk key it has not seen; the answer says which environment it evaluates. Keys
    // never leave the control plane, nor do their hashes or the pepper they are hashed with.
    route({
      method: 'POST',
      path: '/api/v1/replica/keys/verify',
      permission: 'replication',
      body: 'json',
      handle: ({ principal: { org }, body }) => {
        const key = (body as { key?: unknown } | null)?.key;
        if (typeof key !== 'string') throw new InvalidInputError('key must be a string', 'key');
        const principal = deps.keys.authenticate(key);
        if (principal?.kind !== 'sdk' || principal.org !== org) throw new NotFoundError('sdk key');
        const validUntil = deps.keys.validUntil(deps.keys.keyView(org, principal.keyId));
        return {
          body: {
            keyId: principal.keyId,
            projectId: principal.projectId,
            environment: principal.environment,
            ...(validUntil ? { validUntil } : {}),
            ...(principal.expiresAt ? { expiresAt: principal.expiresAt } : {}),
          },
        };
      },
    }),
    // Ids only (no hashes): replicas drop cached verdicts of keys revoked since, and learn when a rotated key's
    // grace ends, so they refuse it at that moment rather than at their next poll.
    route({
      method: 'GET',
      path: '/api/v1/replica/keys',
      permission: 'replication',
      body: 'none',
      handle: ({ principal: { org } }) => ({
        body: {
          keys: deps.keys
            .listKeys(org)
            .filter((k) => k.kind === 'sdk')
            .map((k) => {
              const validUntil = deps.keys.validUntil(k);
              return { id: k.id, revoked: k.revokedAt !== undefined, ...(validUntil ? { validUntil } : {}) };
            }),
        },
      }),
    }),
    route({
      method: 'POST',
      path: '/api/v1/replica/counts',
      permission: 'replication',
      body: 'json',
      handle: async ({ principal: { org }, body }) => {
        const batch = countsBatch(body, org, deps.holder);
        if (!(await deps.batches.claim(org, batch.batchId))) return { status: 202, body: { accepted: 0, duplicate: true } };
        let accepted = 0;
        for (const e of batch.entries) if (deps.counter.add(e.scope, e.flagKey, e.variation, e.hourStartMs, e.count)) accepted++;
        for (const e of batch.events) accepted += addEventCells(deps.counter, deps.trackNames, e.scope, e.exposures, e.track).accepted;
        return { status: 202, body: { accepted, duplicate: false } };
      },
    }),
  ];
  return {
    routes,
    close: () => {
      for (const close of [...streams]) close();
    },
  };
}
