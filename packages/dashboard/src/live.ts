import { startRefreshing, type Visibility } from './poller.js';

/** The control plane's announcements for signed-in pages (docs/dashboard.md, "Live updates"). */
export const EVENTS_PATH = '/dashboard/api/events';

/**
 * A safety net, not the way changes arrive: each followed view is re-read this long after its last refresh
 * even without an announcement, which also keeps "3 min ago" texts current.
 */
export const REFRESH_EVERY_MS = 60_000;

/** How long to wait before connecting again after the server refused the stream (it was full, or stopping). */
const RECONNECT_MS = 5_000;

export interface Live {
  /** Runs `task` now and again whenever the organisation's state moves; returns the function that stops it. */
  follow(task: () => Promise<void>): () => void;
  close(): void;
}

/**
 * One EventSource per signed-in page: the server announces every move of the organisation's main (an edit,
 * a kill by an agent, a git push, a scheduled step), and every followed view re-reads what it shows. While
 * the connection is down, EventSource reconnects by itself; on reconnecting, views re-read, since an
 * announcement may have been missed.
 */
export function connectLive(visibility: Visibility = document): Live {
  const refreshers = new Set<{ poke(): void }>();
  const pokeAll = () => {
    for (const r of refreshers) r.poke();
  };
  let source: EventSource | null = null;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  let connectedBefore = false;
  const connect = () => {
    source = new EventSource(EVENTS_PATH);
    source.addEventListener('moved', pokeAll);
    source.addEventListener('open', () => {
      if (connectedBefore) pokeAll();
      connectedBefore = true;
    });
    source.addEventListener('error', () => {
      // CLOSED: the server answered other than with a stream (503 when full, 401 when signed out); try later.
      if (source?.readyState === EventSource.CLOSED && !closed) {
        source = null;
        retry = setTimeout(connect, RECONNECT_MS);
      }
    });
  };
  connect();
  return {
    follow(task) {
      const refresher = startRefreshing(task, REFRESH_EVERY_MS, visibility);
      refreshers.add(refresher);
      return () => {
        refresher.stop();
        refreshers.delete(refresher);
      };
    },
    close() {
      closed = true;
      clearTimeout(retry);
      source?.close();
      refreshers.clear();
    },
  };
}
