import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { bearerToken } from '../../foundations/auth/key-format.js';
import { toHttpError } from '../../foundations/errors/http-status.js';
import { UnauthorizedError } from '../../foundations/errors/kinds.js';
import type { SyncStatus } from './replica-sync.js';

/**
 * A replica's GET /healthz. 200 while it has anything to serve, even with no control plane reachable (a load
 * balancer must not take every replica out because the control planes are down): `stale` then. `following`
 * names the control plane it follows or is trying to reach; `behind` the environments that control plane has
 * not caught up with, which keep what the replica served before; `missing` the environments (`projectId/environment`)
 * whose saved snapshot was damaged and that upstream has not given again yet, which answer 503 meanwhile. While
 * the control plane refuses the replica's token, `upstream` is `refused` and `tokenRefused` its answer, and a
 * replica with nothing to serve says `refused` rather than `starting`: it will not get anything until the token
 * is replaced.
 */
export function replicaHealth(
  status: SyncStatus,
  views: number,
  missing: readonly string[] = [],
): { status: number; body: Record<string, unknown> } {
  const { connected, following, behind, lastSyncAt, tokenRefused } = status;
  const refused = !connected && tokenRefused !== null;
  const upstream = connected ? 'connected' : refused ? 'refused' : 'unreachable';
  const lost = { ...(refused ? { tokenRefused } : {}), ...(missing.length > 0 ? { missing } : {}) };
  if (!connected && views === 0)
    return { status: 503, body: { status: refused ? 'refused' : 'starting', upstream, following, lastSyncAt, ...lost } };
  const body: Record<string, unknown> = { status: connected ? 'ok' : 'stale', upstream, following, lastSyncAt };
  if (behind.length > 0) body.behind = behind;
  return { status: 200, body: { ...body, ...lost } };
}

/**
 * /healthz as a caller may see it: the status alone without a credential (where the replica follows, and the
 * projects behind, are the operator's to see); the whole of it with the metrics token or the replica's own token
 * for its control planes; 401 with any other.
 */
export function replicaHealthFor(
  readers: { metricsToken?: string; replicaToken: string },
  health: () => { status: number; body: Record<string, unknown> },
): (req: IncomingMessage) => { status: number; body: unknown } {
  const digests = [readers.metricsToken, readers.replicaToken].filter((t): t is string => t !== undefined && t !== '').map(digest);
  return (req) => {
    const answer = health();
    const presented = bearerToken(req.headers.authorization);
    if (presented === null) return { status: answer.status, body: { status: answer.body.status } };
    const seen = digest(presented);
    if (digests.some((d) => timingSafeEqual(d, seen))) return answer;
    const refused = toHttpError(
      new UnauthorizedError(
        "the details of a replica's /healthz need the metrics token or the replica's token; without a credential it answers the status alone",
      ),
    );
    return { status: refused.status, body: refused.body };
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
