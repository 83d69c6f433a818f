import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { replicaHealth, replicaHealthFor } from '../../src/apps/replica/replica-health.js';
import type { SyncStatus } from '../../src/apps/replica/replica-sync.js';

const status: SyncStatus = {
  connected: true,
  following: 'http://127.0.0.1:4000',
  behind: ['shop/prod'],
  failovers: {},
  lastSyncAt: '2026-11-27T09:00:00.000Z',
  lastContactAt: null,
  tokenRefused: null,
};
const request = (authorization?: string) => ({ headers: authorization ? { authorization } : {} }) as IncomingMessage;

describe("a replica's /healthz", () => {
  const health = replicaHealthFor({ metricsToken: 'metrics-s3cret', replicaToken: 'svc_adm_replica' }, () => replicaHealth(status, 1));

  it('answers the status alone without a credential: where it follows and what is behind are the operator’s', () => {
    expect(health(request())).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('answers the whole of it to the metrics token or the replica’s own token, and 401 to any other', () => {
    const whole = {
      status: 'ok',
      upstream: 'connected',
      following: status.following,
      lastSyncAt: status.lastSyncAt,
      behind: ['shop/prod'],
    };
    expect(health(request('Bearer metrics-s3cret'))).toEqual({ status: 200, body: whole });
    expect(health(request('Bearer svc_adm_replica'))).toEqual({ status: 200, body: whole });
    const refused = health(request('Bearer svc_adm_someone_else'));
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: { code: 'unauthorized' } });
  });

  it('names, in the details, the environments whose saved snapshot was damaged and not fetched again yet', () => {
    const details = request('Bearer svc_adm_replica');
    const missing = replicaHealthFor({ replicaToken: 'svc_adm_replica' }, () => replicaHealth(status, 1, ['prj_shop/prod']));
    expect(missing(details)).toMatchObject({ status: 200, body: { status: 'ok', missing: ['prj_shop/prod'] } });
    const offline = { ...status, connected: false };
    const nothing = replicaHealthFor({ replicaToken: 'svc_adm_replica' }, () => replicaHealth(offline, 0, ['prj_shop/prod']));
    expect(nothing(details)).toMatchObject({ status: 503, body: { status: 'starting', missing: ['prj_shop/prod'] } });
    expect(nothing(request())).toEqual({ status: 503, body: { status: 'starting' } });
  });

  it('says the control plane refuses its token, and its answer, rather than starting or unreachable', () => {
    const details = request('Bearer svc_adm_replica');
    const answer = 'upstream /api/v1/replica/stream: 401 {"error":{"code":"unauthorized"}}';
    const refused = { ...status, connected: false, tokenRefused: answer };
    const nothing = replicaHealthFor({ replicaToken: 'svc_adm_replica' }, () => replicaHealth(refused, 0));
    expect(nothing(request())).toEqual({ status: 503, body: { status: 'refused' } });
    expect(nothing(details)).toMatchObject({ status: 503, body: { status: 'refused', upstream: 'refused', tokenRefused: answer } });
    const saved = replicaHealthFor({ replicaToken: 'svc_adm_replica' }, () => replicaHealth(refused, 2));
    expect(saved(details)).toMatchObject({ status: 200, body: { status: 'stale', upstream: 'refused', tokenRefused: answer } });
  });
});
