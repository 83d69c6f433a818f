import type { EvaluationContext } from '@flagops/core';
import type Koa from 'koa';
import { readJsonBody } from '../../http/read-json-body.js';

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
 * error: contract §4 defines the result without a userId, and OFREP must agree with every other path.
 */
export async function readOfrepRequest(ctx: Koa.Context): Promise<OfrepRequest> {
  let body: unknown;
  try {
    body = await readJsonBody(ctx.req);
  } catch (err) {
    return { ok: false, errorCode: 'PARSE_ERROR', errorDetails: (err as Error).message };
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
