import { ENVIRONMENTS } from '@flagops/core';
import type Koa from 'koa';
import { FlagopsError } from '../../../foundations/errors/kinds.js';
import type { RepositoryRegistry } from '../../../foundations/storage/repository-registry.js';
import type { EnvironmentView } from '../../eval-server/environment-view.js';
import type { SnapshotHolder } from '../../eval-server/snapshot-holder.js';
import { viewChange } from '../view-change.js';

/** One served (project, environment) as a replica lists it. */
export interface ReplicaListing {
  projectId: string;
  projectSlug: string;
  environment: string;
  version: number;
}

export const listing = (view: EnvironmentView): ReplicaListing => ({
  projectId: view.projectId,
  projectSlug: view.projectSlug,
  environment: view.environment,
  version: view.version,
});

/**
 * Waits until the holder serves `org`'s head. While the service is still starting it serves nothing yet, and
 * an empty answer would make replicas drop every view they serve: 503, and they retry.
 */
export async function servedOrg(org: string, holder: SnapshotHolder): Promise<void> {
  if (!holder.has(org)) throw new FlagopsError('unavailable', 'the control plane is starting; try again shortly');
  await holder.served(org);
}

/** Every view the holder serves for `org`. The project ids come from main; the holder has the views. */
export async function servedViews(org: string, repos: RepositoryRegistry, holder: SnapshotHolder): Promise<EnvironmentView[]> {
  return (await viewsAndHead(org, repos, holder)).views;
}

async function viewsAndHead(org: string, repos: RepositoryRegistry, holder: SnapshotHolder) {
  await servedOrg(org, holder);
  const { state } = await (await repos.get(org)).readServed();
  const views: EnvironmentView[] = [];
  for (const project of state.projects.values()) {
    for (const env of ENVIRONMENTS) {
      const view = holder.view(org, project.project.id, env);
      if (view) views.push(view);
    }
  }
  // Read in the same turn as the views: the head they represent.
  return { views, head: holder.servedHeadAndHeight(org) };
}

/** What a replica lists: the stream's first event and GET /api/v1/replica/snapshots. */
export interface ServedListing {
  org: string;
  /**
   * The commit the views represent and its height: a replica that fails over between control planes on one
   * git remote tells by it whether one that does not list a view deleted it or has not seen it yet.
   */
  head: { commit: string; height: number } | null;
  snapshots: ReplicaListing[];
}

export async function servedListing(org: string, repos: RepositoryRegistry, holder: SnapshotHolder): Promise<ServedListing> {
  const { views, head } = await viewsAndHead(org, repos, holder);
  return { org, head, snapshots: views.map(listing) };
}

/**
 * How often the feed says it is alive. A control plane that hangs (stopped, swapping) keeps its connections
 * open: its replicas notice only by the silence, and must be on another control plane within seconds.
 */
const HEARTBEAT_MS = 1_000;

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * GET /api/v1/replica/stream: Server-Sent Events for one organisation's replicas. `versions` first (every
 * served view, so a reconnecting replica reconciles in one step), then `version` for each view the holder
 * swaps in — in the same turn, so a kill leaves for the replicas the moment the control plane serves it. A view
 * that only has a new kill overlay goes as a kill, with its kills (viewChange): replicas apply it without
 * fetching the view, and nothing here serializes the flags.
 */
export function openReplicaStream(
  ctx: Koa.Context,
  initial: ServedListing,
  holder: SnapshotHolder,
  closers: Set<() => void>,
  /** Where the stream hears that keys changed: a `keys` event has the replica read its key list at once. */
  onKeysChanged: (listener: () => void) => () => void,
  /** Whether the key that opened the stream may still replicate: checked when keys change and at each heartbeat. */
  stillAuthorized: () => boolean,
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
  const { org } = initial;
  // `heartbeatMs` tells the replica how soon silence means a hung control plane.
  res.write(`retry: 1000\n\n${event('versions', { ...initial, heartbeatMs: HEARTBEAT_MS })}`);
  const stop = holder.onChange((views: EnvironmentView[]) => {
    for (const view of views) if (view.org === org) res.write(event('version', viewChange(view)));
  });
  // A revoked or rotated key stops working on replicas as soon as here, not at their next periodic listing; the
  // stream of the key itself ends then too, or at the next heartbeat once a rotation's grace ends.
  const stopKeys = onKeysChanged(() => {
    if (stillAuthorized()) res.write(event('keys', {}));
    else close();
  });
  const heartbeat = setInterval(() => {
    if (stillAuthorized()) res.write(': heartbeat\n\n');
    else close();
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const close = () => {
    stop();
    stopKeys();
    clearInterval(heartbeat);
    closers.delete(close);
    res.end();
  };
  closers.add(close);
  res.on('close', close);
}
