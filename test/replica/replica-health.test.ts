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
});
