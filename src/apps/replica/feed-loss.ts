import { UpstreamError } from './upstream-client.js';

/** Why a replica stopped following an upstream: the `reason` of its failover log line and metric. */
export type FeedLossReason =
  | 'unreachable' // connection refused, or the name does not resolve
  | 'timeout' // no answer within the request deadline
  | 'error-status' // an HTTP error instead of the feed (a 5xx while it starts or fails, a 401 for a wrong key)
  | 'connection-lost' // the connection broke mid-stream (a reset)
  | 'stream-ended' // the feed ended: the control plane stopped, or its process died (the kernel closes its sockets)
  | 'silent' // no event and no heartbeat for longer than the idle timeout
  | 'sync-failed' // a view it listed could not be fetched or read
  | 'other-organisation'; // it serves another organisation than the replica does: a misconfigured list

export class FeedLost extends Error {
  constructor(
    readonly reason: FeedLossReason,
    message: string,
    /** The upstream refused the replica's token (401 or 403): retrying gets nothing until the token is replaced. */
    readonly tokenRefused = false,
  ) {
    super(message);
  }
}

/** What a failure while following an upstream means for failover. */
export function feedLoss(err: unknown): FeedLost {
  if (err instanceof FeedLost) return err;
  if (err instanceof UpstreamError) {
    if (err.status !== 0) return new FeedLost('error-status', err.message, err.status === 401 || err.status === 403);
    return new FeedLost(err.timedOut ? 'timeout' : 'unreachable', err.message);
  }
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : (err as Error).message;
  return new FeedLost('connection-lost', `the replica feed broke: ${detail}`);
}
