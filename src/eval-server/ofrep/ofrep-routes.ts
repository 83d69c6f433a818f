import type Koa from 'koa';
import { matchesEtag } from '../if-none-match.js';
import type { ViewSource } from '../view-source.js';
import { bulkEtag } from './ofrep-etag.js';
import { OFREP_FLAG_PREFIX } from './ofrep-paths.js';
import { readOfrepRequest } from './ofrep-request.js';
import { ofrepSuccess } from './ofrep-result.js';

/**
 * The OpenFeature Remote Evaluation Protocol (github.com/open-feature/protocol, service/openapi.yaml) over the
 * same views as /v1/evaluate: any OFREP provider can read flagops flags with an SDK key as its bearer token,
 * from the main server or a replica.
 */
export { OFREP_FLAG_PREFIX };

/** POST /ofrep/v1/evaluate/flags/{key}: one flag, evaluated and counted like POST /v1/evaluate. */
export async function ofrepFlagRoute(ctx: Koa.Context, { source }: { source: ViewSource }): Promise<void> {
  const encoded = ctx.path.slice(OFREP_FLAG_PREFIX.length);
  const view = await source.view(ctx.req);
  let key: string;
  try {
    key = decodeURIComponent(encoded);
  } catch {
    ctx.status = 400;
    ctx.body = { key: encoded, errorCode: 'PARSE_ERROR', errorDetails: 'the flag key in the path is not valid percent-encoding' };
    return;
  }
  const request = await readOfrepRequest(ctx);
  if (!request.ok) {
    ctx.status = 400;
    ctx.body = { key, errorCode: request.errorCode, errorDetails: request.errorDetails };
    return;
  }
  const result = view.compiled.evaluate(key, request.context, view.killed);
  if (result.reason === 'flag_not_found') {
    ctx.status = 404;
    ctx.body = { key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `this environment has no flag ${key}` };
    return;
  }
  if (result.variation !== undefined) source.recorder(view)(key, result.variation);
  ctx.body = ofrepSuccess(key, result);
}

/**
 * POST /ofrep/v1/evaluate/flags: every flag of the environment for one context, with an ETag (If-None-Match →
 * 304). Not counted in stats: a web provider fetches them all to cache them, and which it reads is unknown here.
 */
export async function ofrepBulkRoute(ctx: Koa.Context, { source }: { source: ViewSource }): Promise<void> {
  const view = await source.view(ctx.req);
  const request = await readOfrepRequest(ctx);
  if (!request.ok) {
    ctx.status = 400;
    ctx.body = { errorCode: request.errorCode, errorDetails: request.errorDetails };
    return;
  }
  const etag = bulkEtag(view, request.raw);
  ctx.set('ETag', etag);
  ctx.set('Cache-Control', 'no-cache');
  if (matchesEtag(ctx.get('if-none-match'), etag)) {
    ctx.status = 304;
    return;
  }
  const { compiled, killed } = view;
  const flags = compiled.keys.map((key) => ofrepSuccess(key, compiled.evaluate(key, request.context, killed)));
  ctx.body = { flags, metadata: { version: view.version } };
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
