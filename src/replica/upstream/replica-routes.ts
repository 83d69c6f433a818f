import { isEnvironmentName } from '@flagops/core';
import type Router from '@koa/router';
import type Koa from 'koa';
import { bearerToken } from '../../auth/key-format.js';
import type { KeyService } from '../../auth/key-service.js';
import type { Principal } from '../../auth/principal.js';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../../errors/kinds.js';
import { matchesEtag } from '../../eval-server/routed-app.js';
import type { SnapshotHolder } from '../../eval-server/snapshot-holder.js';
import { readJsonBody } from '../../http/read-json-body.js';
import type { ReplicaBatchLedger } from '../../state/index.js';
import type { EvaluationCounter } from '../../stats/evaluation-counter.js';
import type { RepositoryRegistry } from '../../storage/repository-registry.js';
import { viewBody } from '../replica-holder.js';
import { countsBatch } from './counts-batch.js';
import { listing, openReplicaStream, servedOrg, servedViews } from './replica-views.js';

export interface ReplicaUpstreamDeps {
  keys: KeyService;
  repos: RepositoryRegistry;
  holder: SnapshotHolder;
  counter: EvaluationCounter;
  /** The ids of count batches already taken, kept across restarts. */
  batches: ReplicaBatchLedger;
}

/** What the composition root must call on stop: ends the replica streams so the server stops at once. */
export interface ReplicaUpstream {
  register(router: Router): void;
  close(): void;
}

/**
 * The control plane's side of evaluation replicas (docs/deployment.md): `/api/v1/replica/...`, admin keys
 * only. Replicas list and fetch the served views (with ETags), follow the stream of new versions, verify
 * sdk keys they have not seen, and hand in evaluation counts in idempotent batches.
 */
export function replicaUpstream(deps: ReplicaUpstreamDeps): ReplicaUpstream {
  const streams = new Set<() => void>();
  return {
    close: () => {
      for (const close of [...streams]) close();
    },
    register(router) {
      router.get('/api/v1/replica/snapshots', async (ctx) => {
        const { org } = replicaPrincipal(ctx, deps.keys);
        ctx.body = { org, snapshots: (await servedViews(org, deps.repos, deps.holder)).map(listing) };
      });

      router.get('/api/v1/replica/snapshots/:projectId/:env', async (ctx) => {
        const { org } = replicaPrincipal(ctx, deps.keys);
        const env = ctx.params.env;
        if (!isEnvironmentName(env)) throw new NotFoundError(`environment ${env}`);
        await servedOrg(org, deps.holder);
        const view = deps.holder.view(org, ctx.params.projectId, env);
        if (!view) throw new NotFoundError(`project ${ctx.params.projectId}`);
        ctx.set('ETag', view.etag);
        ctx.set('Cache-Control', 'no-cache');
        if (matchesEtag(ctx.get('if-none-match'), view.etag)) {
          ctx.status = 304;
          return;
        }
        ctx.body = viewBody(view);
      });

      router.get('/api/v1/replica/stream', async (ctx) => {
        const { org } = replicaPrincipal(ctx, deps.keys);
        openReplicaStream(ctx, org, (await servedViews(org, deps.repos, deps.holder)).map(listing), deps.holder, streams);
      });

      // The replica sends an sdk key it has not seen; the answer says which environment it evaluates. Keys
      // never leave the control plane, nor do their hashes or the pepper they are hashed with.
      router.post('/api/v1/replica/keys/verify', async (ctx) => {
        const { org } = replicaPrincipal(ctx, deps.keys);
        const body = (await readJsonBody(ctx.req)) as { key?: unknown } | null;
        if (typeof body?.key !== 'string') throw new InvalidInputError('key must be a string', 'key');
        const principal = deps.keys.authenticate(body.key);
        if (principal?.kind !== 'sdk' || principal.org !== org) throw new NotFoundError('sdk key');
        ctx.body = { keyId: principal.keyId, projectId: principal.projectId, environment: principal.environment };
      });

      // Ids only (no hashes): replicas drop cached verdicts of keys revoked since.
      router.get('/api/v1/replica/keys', (ctx) => {
        const { org } = replicaPrincipal(ctx, deps.keys);
        ctx.body = {
          keys: deps.keys
            .listKeys(org)
            .filter((k) => k.kind === 'sdk')
            .map((k) => ({ id: k.id, revoked: k.revokedAt !== undefined })),
        };
      });

      router.post('/api/v1/replica/counts', async (ctx) => {
        const { org } = replicaPrincipal(ctx, deps.keys);
        const batch = countsBatch(await readJsonBody(ctx.req), org, deps.holder);
        ctx.status = 202;
        if (!(await deps.batches.claim(org, batch.batchId))) {
          ctx.body = { accepted: 0, duplicate: true };
          return;
        }
        let accepted = 0;
        for (const e of batch.entries) if (deps.counter.add(e.scope, e.flagKey, e.variation, e.hourStartMs, e.count)) accepted++;
        ctx.body = { accepted, duplicate: false };
      });
    },
  };
}

/**
 * Replication is admin-only: a replica can verify any sdk key of the organisation and reads every project,
 * which is more than an agent key may (key matters are for admin keys only).
 */
export function replicaPrincipal(ctx: Koa.Context, keys: KeyService): Principal {
  const principal = keys.controlPlanePrincipal(bearerToken(ctx.get('authorization')), ctx.req);
  if (principal.kind !== 'admin') throw new ForbiddenError('replication needs an admin key');
  return principal;
}
