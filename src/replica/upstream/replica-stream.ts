import type Koa from 'koa';
import type { EnvironmentView } from '../../eval-server/environment-view.js';
import type { SnapshotHolder } from '../../eval-server/snapshot-holder.js';
import { listing, type ReplicaListing } from './replica-views.js';

const HEARTBEAT_MS = 15_000;

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * GET /api/v1/replica/stream: Server-Sent Events for one organisation's replicas. `versions` first (every
 * served view, so a reconnecting replica reconciles in one step), then `version` for each view the holder
 * swaps in — in the same turn, so a kill leaves for the replicas the moment the control plane serves it.
 */
export function openReplicaStream(
  ctx: Koa.Context,
  org: string,
  initial: ReplicaListing[],
  holder: SnapshotHolder,
  closers: Set<() => void>,
): void {
  ctx.respond = false;
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  const res = ctx.res;
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'close',
    'X-Accel-Buffering': 'no',
  });
  res.write(`retry: 1000\n\n${event('versions', { org, snapshots: initial })}`);
  const stop = holder.onChange((views: EnvironmentView[]) => {
    for (const view of views) if (view.org === org) res.write(event('version', listing(view)));
  });
  const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  const close = () => {
    stop();
    clearInterval(heartbeat);
    closers.delete(close);
    res.end();
  };
  closers.add(close);
  res.on('close', close);
}
