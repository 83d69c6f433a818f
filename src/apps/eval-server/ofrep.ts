import { createHash } from 'node:crypto';
import { type EvaluationContext, type EvaluationResult, flagMetadata, type JsonValue, openFeatureReason } from '@flagops/core';
import type Koa from 'koa';
import { InvalidInputError, NotFoundError } from '../../foundations/errors/kinds.js';
import { sendJsonPerRequest, VARY_KEY_AND_ENCODING } from '../../foundations/http/encoded-json.js';
import { readJsonBody } from '../../foundations/http/read-json-body.js';
import type { EnvironmentView } from './environment-view.js';
import { matchesEtag } from './routed-app.js';
import type { ViewSource } from './view-source.js';

/**
 * The OpenFeature Remote Evaluation Protocol (github.com/open-feature/protocol, service/openapi.yaml) over the
 * same views as /v1/evaluate: any OFREP provider can read flagops flags with an SDK key as its bearer token,
 * from the main server or a replica.
 */

/** OFREP puts the flag key in the path; the route table matches this prefix. */
export const OFREP_FLAG_PREFIX = '/ofrep/v1/evaluate/flags/';

/** The OFREP error codes a request itself can cause (OFREP openapi: evaluationFailure). */
export type OfrepRequestErrorCode = 'PARSE_ERROR' | 'INVALID_CONTEXT';

export type OfrepRequest =
  | { ok: true; context: EvaluationContext /** The context as sent, for the bulk ETag. */; raw: Record<string, unknown> }
  | { ok: false; errorCode: OfrepRequestErrorCode; errorDetails: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const EMPTY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/**
 * Reads `{ context: { targetingKey, ...attributes } }`. OpenFeature's targetingKey is flagops' userId (it
 * drives bucketing); every other field is an attribute rules can match. A missing targetingKey is not an
 * error: a context without a userId has no bucket (docs/evaluation.md), and OFREP must agree with every other path.
 */
export async function readOfrepRequest(ctx: Koa.Context): Promise<OfrepRequest> {
  let body: unknown;
  try {
    body = await readJsonBody(ctx.req);
  } catch (err) {
    // A body too large (413) or not JSON by its content type (415) is answered as on every other route.
    if (!(err instanceof InvalidInputError)) throw err;
    return { ok: false, errorCode: 'PARSE_ERROR', errorDetails: err.message };
  }
  if (body === undefined) return { ok: true, context: {}, raw: EMPTY };
  if (!isPlainObject(body)) return { ok: false, errorCode: 'PARSE_ERROR', errorDetails: 'the body must be a JSON object { context }' };
  const raw = body.context;
  if (raw === undefined || raw === null) return { ok: true, context: {}, raw: EMPTY };
  if (!isPlainObject(raw)) return { ok: false, errorCode: 'INVALID_CONTEXT', errorDetails: 'context must be an object' };
  const { targetingKey, ...attributes } = raw;
  if (targetingKey !== undefined && targetingKey !== null && typeof targetingKey !== 'string') {
    return { ok: false, errorCode: 'INVALID_CONTEXT', errorDetails: 'context.targetingKey must be a string' };
  }
  const context: EvaluationContext = { attributes };
  if (typeof targetingKey === 'string') context.userId = targetingKey;
  return { ok: true, context, raw };
}

export interface OfrepSuccess {
  key: string;
  value?: JsonValue;
  reason: string;
  variant?: string;
  metadata: Record<string, string | number | boolean>;
}

/**
 * One successful evaluation in OFREP's shape. A null value (an archived flag without a defaultValue) is left
 * out: OFREP has no null type, and an absent value tells the provider to use the code default (OFREP ADR-0006).
 */
export function ofrepSuccess(key: string, result: EvaluationResult): OfrepSuccess {
  const out: OfrepSuccess = { key, reason: openFeatureReason(result.reason), metadata: flagMetadata(result) };
  if (result.value !== null) out.value = result.value;
  if (result.variation !== undefined) out.variant = result.variation;
  return out;
}

/**
 * The ETag of a bulk evaluation: the snapshot version plus a digest of the environment and the context as
 * sent. Either changing gives a new tag; the same context sent again (what a polling web provider does) gets
 * 304. The same context with its fields in another order only costs a 200, never a wrong 304.
 */
export function bulkEtag(view: EnvironmentView, rawContext: Record<string, unknown>): string {
  const digest = createHash('sha256')
    .update(`${view.projectId}\n${view.environment}\n${JSON.stringify(rawContext)}`)
    .digest('base64url')
    .slice(0, 22);
  return `"v${view.version}-${digest}"`;
}

/** POST /ofrep/v1/evaluate/flags/{key}: one flag, evaluated and counted like POST /v1/evaluate. */
export async function ofrepFlagRoute(ctx: Koa.Context, { source }: { source: ViewSource }): Promise<void> {
  const encoded = ctx.path.slice(OFREP_FLAG_PREFIX.length);
  const key = decodedKey(encoded);
  const view = await ofrepView(ctx, source, { key: key ?? encoded, errorCode: 'FLAG_NOT_FOUND' });
  if (view === null) return;
  if (key === null) {
    ofrepError(ctx, 400, {
      key: encoded,
      errorCode: 'PARSE_ERROR',
      errorDetails: 'the flag key in the path is not valid percent-encoding',
    });
    return;
  }
  const request = await readOfrepRequest(ctx);
  if (!request.ok) {
    ofrepError(ctx, 400, { key, errorCode: request.errorCode, errorDetails: request.errorDetails });
    return;
  }
  const result = view.compiled.evaluate(key, request.context, view.killed);
  if (result.reason === 'flag_not_found') {
    ofrepError(ctx, 404, { key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `this environment has no flag ${key}` });
    return;
  }
  if (result.variation !== undefined) source.recorder(view)(key, result.variation, result.reason);
  ctx.body = ofrepSuccess(key, result);
}

/**
 * POST /ofrep/v1/evaluate/flags: every flag of the environment for one context, with an ETag (If-None-Match →
 * 304), compressed as the request accepts (for this request alone: the body depends on its context). Not
 * counted in stats: a web provider fetches them all to cache them, and which it reads is unknown here.
 */
export async function ofrepBulkRoute(ctx: Koa.Context, { source }: { source: ViewSource }): Promise<void> {
  // No one flag is asked about, so OpenFeature's general code.
  const view = await ofrepView(ctx, source, { errorCode: 'GENERAL' });
  if (view === null) return;
  const request = await readOfrepRequest(ctx);
  if (!request.ok) {
    ofrepError(ctx, 400, { errorCode: request.errorCode, errorDetails: request.errorDetails });
    return;
  }
  const etag = bulkEtag(view, request.raw);
  ctx.set({ ETag: etag, 'Cache-Control': 'no-cache', Vary: VARY_KEY_AND_ENCODING });
  if (matchesEtag(ctx.get('if-none-match'), etag)) {
    ctx.status = 304;
    return;
  }
  const { compiled, killed } = view;
  const flags = compiled.keys.map((key) => ofrepSuccess(key, compiled.evaluate(key, request.context, killed)));
  await sendJsonPerRequest(ctx, JSON.stringify({ flags, metadata: { version: view.version } }));
}

/** GET /ofrep/v1/configuration (an OFREP extension): what providers may rely on. */
export async function ofrepConfigurationRoute(ctx: Koa.Context, { source }: { source: ViewSource }): Promise<void> {
  await source.view(ctx.req);
  ctx.body = {
    name: 'flagops',
    capabilities: {
      cacheInvalidation: { polling: { enabled: true, minPollingIntervalMs: 1000 } },
      flagEvaluation: { supportedTypes: ['boolean', 'string', 'int', 'float', 'object'] },
    },
  };
}

function decodedKey(encoded: string): string | null {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return null;
  }
}

/**
 * The view the request's SDK key fixes, or null once a key whose project does not exist is answered: a 404 in
 * OFREP's shape, which providers read (errorCode, errorDetails), rather than the service's error body alone.
 * Every other failure (a refused key, 503 while starting) is the service's answer, as on every route.
 */
async function ofrepView(
  ctx: Koa.Context,
  source: ViewSource,
  answer: { key?: string; errorCode: 'FLAG_NOT_FOUND' | 'GENERAL' },
): Promise<EnvironmentView | null> {
  try {
    return await source.view(ctx.req);
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    ofrepError(ctx, 404, { ...answer, errorDetails: err.message });
    return null;
  }
}

/**
 * An OFREP error: the fields OFREP defines (`errorCode`, `errorDetails`, and `key` for one flag), which its
 * providers read, plus the `error` object every other answer of this port has, for anyone else.
 */
function ofrepError(ctx: Koa.Context, status: 400 | 404, body: { key?: string; errorCode: string; errorDetails: string }): void {
  ctx.status = status;
  ctx.body = { ...body, error: { code: status === 404 ? 'not_found' : 'invalid_input', message: body.errorDetails } };
}
