import type Koa from 'koa';
import { addMicros, type ExposureCell, type ParsedEvents, type TrackCell, toMicros } from '../../features/stats/event-counts.js';
import { HOUR_MS, hourStart, oldestKeptHour } from '../../features/stats/hours.js';
import { InvalidInputError } from '../../foundations/errors/kinds.js';
import { readJsonBody } from '../../foundations/http/read-json-body.js';
import { validateBody } from '../../foundations/validation/validate-body.js';
import { type CountRules, servesVariation, viewCountRules } from './count-rules.js';
import type { EnvironmentView } from './environment-view.js';
import type { ViewSource } from './view-source.js';

/** At most this many events in one POST /v1/events (the schema says so too); SDKs send more in several. */
export const MAX_EVENTS = 1000;

/** 1,000 events of the largest size the schema allows fit in it with room to spare. */
export const EVENTS_BODY_LIMIT = 1024 * 1024;

const SEP = '\u0000';

/**
 * Checks every event of a request before any is counted (the schema; `at` not in the future), so a malformed
 * request is refused whole and a 400 names the first bad event by index and field. An exposure of a flag or
 * variation the environment does not serve is well formed but not counted (`ignored`): an SDK whose snapshot
 * is a moment behind (the flag was just removed) must not lose the rest of its batch for it. Events of an hour
 * no longer kept (30 days) are valid but not counted.
 */
export function parseEvents(body: unknown, rules: CountRules): ParsedEvents {
  const { events } = validateBody('events', body);
  const latest = rules.now + HOUR_MS; // an hour ahead of this server's clock allows for clock skew
  const oldest = oldestKeptHour(rules.now);
  const nowHour = hourStart(rules.now);
  const exposures = new Map<string, ExposureCell>();
  const track = new Map<string, TrackCell>();
  let ignored = 0;
  for (let i = 0; i < events.length; i++) {
    const event = events[i];
    let hour = nowHour;
    if (event.at !== undefined) {
      const at = Date.parse(event.at);
      if (at > latest)
        throw new InvalidInputError(
          `events[${i}].at: more than an hour in the future (${event.at}); an event may be at most an hour ahead, for clock skew`,
          `events[${i}].at`,
        );
      hour = hourStart(at);
    }
    if (hour < oldest) continue;
    if (event.type === 'exposure') {
      const flagKey = event.flagKey as string;
      const variation = event.variation as string;
      if (!servesVariation(rules, flagKey, variation)) {
        ignored++;
        continue;
      }
      const key = flagKey + SEP + variation + SEP + hour;
      const cell = exposures.get(key);
      if (cell) cell.count++;
      else exposures.set(key, { flagKey, variation, hourStartMs: hour, count: 1 });
    } else {
      const name = event.name as string;
      const key = name + SEP + hour;
      const micros = event.value === undefined ? 0 : toMicros(event.value);
      const cell = track.get(key);
      if (cell) {
        cell.count++;
        cell.sumMicros = addMicros(cell.sumMicros, micros);
      } else track.set(key, { name, hourStartMs: hour, count: 1, sumMicros: micros });
    }
  }
  return { exposures: [...exposures.values()], track: [...track.values()], ignored };
}

/**
 * POST /v1/events, on the main server and on replicas: checked whole, then counted by the view source (202: in
 * memory, durable with the next stats flush or replica batch, as /v1/counts). `accepted` is how many events
 * were counted; `ignored`, present when not 0, how many exposures named a flag or variation the environment
 * the sdk key names does not serve; `dropped`, present when not 0, how many track events had a new name while
 * the project keeps as many names as it may (MAX_KEPT_TRACK_NAMES).
 */
export function eventsAnswer(
  view: EnvironmentView,
  body: unknown,
  source: Pick<ViewSource, 'events'>,
): { accepted: number; ignored?: number; dropped?: number } {
  const parsed = parseEvents(body, viewCountRules(view, Date.now()));
  const { accepted, dropped } = source.events(view, parsed);
  return { accepted, ...(parsed.ignored > 0 ? { ignored: parsed.ignored } : {}), ...(dropped > 0 ? { dropped } : {}) };
}

/** POST /v1/events through Koa, for the requests the fast path (fast-path.ts) leaves to the app: the same answers. */
export async function eventsRoute(ctx: Koa.Context, deps: { source: ViewSource }): Promise<void> {
  const view = await deps.source.view(ctx.req);
  const answer = eventsAnswer(view, await readJsonBody(ctx.req, EVENTS_BODY_LIMIT), deps.source);
  ctx.status = 202;
  ctx.body = answer;
}
