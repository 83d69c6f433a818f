import type { IncomingMessage } from 'node:http';
import type { CountedEvents, ParsedEvents } from '../../features/stats/event-counts.js';
import type { EnvironmentView } from './environment-view.js';
import type { RecordVariation } from './evaluate.js';
import type { SnapshotChanges } from './snapshot-changes.js';

/**
 * Where an evaluation endpoint gets the view an SDK key fixes, and where it counts what it served. The main
 * server reads its keys and snapshot holder; a replica, what it synced from upstream. The endpoints written
 * against this (evaluate, snapshot, events, OFREP) are the same code on both.
 */
export interface ViewSource {
  /**
   * The view the SDK key of the request's `Authorization` header fixes; throws the typed error of a bad key (a
   * wrong one counts against the request's address).
   */
  view(req: IncomingMessage): EnvironmentView | Promise<EnvironmentView>;
  /** Counts a served variation into the stats of the view's environment. */
  recorder(view: EnvironmentView): RecordVariation;
  /**
   * Counts a request's checked events (POST /v1/events) for the view's environment; returns how many were kept,
   * and how many track events were dropped for names over the project's bound.
   */
  events(view: EnvironmentView, events: ParsedEvents): CountedEvents;
  /** The recent changes of the views, for GET /v1/snapshot?since= (absent: every such request gets the full snapshot). */
  changes?: Pick<SnapshotChanges, 'delta'>;
}

/** A recorder made once per view (views are replaced, never changed) instead of once per request. */
export function recorderPerView(make: (view: EnvironmentView) => RecordVariation): (view: EnvironmentView) => RecordVariation {
  const recorders = new WeakMap<EnvironmentView, RecordVariation>();
  return (view) => {
    let record = recorders.get(view);
    if (record === undefined) {
      record = make(view);
      recorders.set(view, record);
    }
    return record;
  };
}
