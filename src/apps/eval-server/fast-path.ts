import type { IncomingMessage, ServerResponse } from 'node:http';
import { toHttpError } from '../../foundations/errors/http-status.js';
import { countBodyBytes, negotiateCoding } from '../../foundations/http/content-encoding.js';
import { encodedJsonHeaders } from '../../foundations/http/encoded-json.js';
import { logRequestFailure } from '../../foundations/http/error-middleware.js';
import { readJsonBody } from '../../foundations/http/read-json-body.js';
import type { FastPath } from '../../foundations/http/serve.js';
import type { Logger } from '../../foundations/log/logger.js';
import { evaluateAnswer } from './evaluate.js';
import { EVENTS_BODY_LIMIT, eventsAnswer } from './events.js';
import { CORS_HEADERS, matchesEtag } from './routed-app.js';
import { snapshotBody } from './snapshot-body.js';
import { snapshotHeaders } from './view-routes.js';
import type { ViewSource } from './view-source.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Told of each request the fast path answered: its route, status and performance.now() at its arrival (the metrics). */
export type RequestTimer = (route: string, status: number, startedAt: number) => void;

const untimed: RequestTimer = () => {};

/**
 * POST /v1/evaluate and GET /v1/snapshot, the two endpoints SDKs call all the time (and POST /v1/events, which
 * SDKs sending exposures call as often), answered on node's
 * request and response before Koa: Koa's context, middleware chain and response handling cost more than half
 * of a 1-key evaluate's CPU (docs/performance.md). Everything else (other paths and methods, query strings,
 * preflights) goes to the app, which answers these two paths the same way.
 */
export function evalServerFastPath(source: ViewSource, logger: Logger, timer: RequestTimer = untimed): FastPath {
  return (req, res) => {
    if (req.method === 'POST' && req.url === '/v1/evaluate') void evaluate(req, res, source, logger, timer);
    else if (req.method === 'GET' && req.url === '/v1/snapshot') void snapshot(req, res, source, logger, timer);
    else if (req.method === 'POST' && req.url === '/v1/events') void events(req, res, source, logger, timer);
    else return false;
    return true;
  };
}

async function evaluate(req: IncomingMessage, res: ServerResponse, source: ViewSource, logger: Logger, timer: RequestTimer): Promise<void> {
  const startedAt = performance.now();
  try {
    const view = await source.view(req);
    send(res, 200, evaluateAnswer(view, await readJsonBody(req), source.recorder(view)));
  } catch (err) {
    fail(req, res, err, logger);
  }
  timer('/v1/evaluate', res.statusCode, startedAt);
}

async function events(req: IncomingMessage, res: ServerResponse, source: ViewSource, logger: Logger, timer: RequestTimer): Promise<void> {
  const startedAt = performance.now();
  try {
    const view = await source.view(req);
    send(res, 202, JSON.stringify(eventsAnswer(view, await readJsonBody(req, EVENTS_BODY_LIMIT), source)));
  } catch (err) {
    fail(req, res, err, logger);
  }
  timer('/v1/events', res.statusCode, startedAt);
}

async function snapshot(req: IncomingMessage, res: ServerResponse, source: ViewSource, logger: Logger, timer: RequestTimer): Promise<void> {
  const startedAt = performance.now();
  try {
    const view = await source.view(req);
    if (matchesEtag(req.headers['if-none-match'], view.etag)) {
      res.writeHead(304, { ...snapshotHeaders(view.etag), ...CORS_HEADERS });
      res.end();
    } else {
      const coding = negotiateCoding(req.headers['accept-encoding']);
      const body = await snapshotBody(view, coding);
      const length = send(res, 200, body, { ...snapshotHeaders(view.etag), ...encodedJsonHeaders(coding) });
      countBodyBytes(coding, length);
    }
  } catch (err) {
    fail(req, res, err, logger);
  }
  timer('/v1/snapshot', res.statusCode, startedAt);
}

/** Sends a JSON body, already in the coding `headers` name; returns its length in bytes. */
function send(res: ServerResponse, status: number, body: string | Buffer, headers?: Record<string, string>): number {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  res.writeHead(status, { 'Content-Type': JSON_TYPE, ...headers, 'Content-Length': length, ...CORS_HEADERS });
  res.end(body);
  return length;
}

/** The `{ error: { code, message } }` body, as the app's error middleware gives it; unexpected errors are logged once. */
function fail(req: IncomingMessage, res: ServerResponse, err: unknown, logger: Logger): void {
  const failure = toHttpError(err);
  logRequestFailure(logger, err, failure.expected, { method: req.method, path: req.url });
  send(res, failure.status, JSON.stringify(failure.body), failure.headers);
}
