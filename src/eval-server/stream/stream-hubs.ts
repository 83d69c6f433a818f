import type { SnapshotHolder } from '../snapshot-holder.js';
import { StreamHub, type StreamHubOptions } from './stream-hub.js';

/**
 * One hub per snapshot holder. The route table's handlers only get the app's deps, so the stream route finds
 * its hub through the holder; the composition root attaches it (to close it first on stop), and an app built
 * without one still streams, through a hub made on first use.
 */
const hubs = new WeakMap<SnapshotHolder, StreamHub>();

export function attachStreamHub(holder: SnapshotHolder, options: StreamHubOptions = {}): StreamHub {
  hubs.get(holder)?.close();
  const hub = new StreamHub(holder, options);
  hubs.set(holder, hub);
  return hub;
}

export function streamHubFor(holder: SnapshotHolder): StreamHub {
  return hubs.get(holder) ?? attachStreamHub(holder);
}
