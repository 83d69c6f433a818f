import type { SyncStatus } from './replica-sync.js';

/**
 * A replica's GET /healthz. 200 while it has anything to serve, even with no control plane reachable (a load
 * balancer must not take every replica out because the control planes are down): `stale` then. `following`
 * names the control plane it follows or is trying to reach; `behind` the environments that control plane has
 * not caught up with, which keep what the replica served before.
 */
export function replicaHealth(status: SyncStatus, views: number): { status: number; body: Record<string, unknown> } {
  const { connected, following, behind, lastSyncAt } = status;
  const upstream = connected ? 'connected' : 'unreachable';
  if (!connected && views === 0) return { status: 503, body: { status: 'starting', upstream, following, lastSyncAt } };
  const body: Record<string, unknown> = { status: connected ? 'ok' : 'stale', upstream, following, lastSyncAt };
  if (behind.length > 0) body.behind = behind;
  return { status: 200, body };
}
