import { type EvaluationContext, type EvaluationResult, setOwn } from '@flagops/core';
import { InvalidInputError } from '../../foundations/errors/kinds.js';
import type { EnvironmentView } from './environment-view.js';

/** At most this many distinct flag keys in one evaluate request. */
export const MAX_EVALUATE_KEYS = 1000;

export interface EvaluateRequest {
  keys: string[];
  context: EvaluationContext;
}

const ALLOWED = new Set(['key', 'keys', 'context']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks a POST /v1/evaluate body: `key`, `keys` or both (their union), an optional context. */
export function parseEvaluateRequest(body: unknown): EvaluateRequest {
  if (!isPlainObject(body)) throw new InvalidInputError('the body must be a JSON object with key or keys', 'body');
  for (const field of Object.keys(body)) {
    if (!ALLOWED.has(field)) throw new InvalidInputError(`unknown field ${field}; expected key, keys and context`, field);
  }
  const { key, keys, context } = body;
  if (key === undefined && keys === undefined)
    throw new InvalidInputError('send key (one flag key) or keys (an array of flag keys)', 'key');
  let all: string[];
  if (keys === undefined) {
    all = [];
  } else {
    if (!Array.isArray(keys)) throw new InvalidInputError('keys must be an array of flag keys', 'keys');
    for (let i = 0; i < keys.length; i++) {
      if (typeof keys[i] !== 'string' || keys[i] === '') throw new InvalidInputError(`keys[${i}] must be a non-empty string`, `keys[${i}]`);
    }
    all = keys as string[];
  }
  if (key !== undefined) {
    if (typeof key !== 'string' || key === '') throw new InvalidInputError('key must be a non-empty string', 'key');
    if (!all.includes(key)) all = [key, ...all];
  }
  if (all.length > 1) {
    // Each key is answered once, so it is evaluated and counted once however often it is listed.
    const unique = new Set(all);
    if (unique.size > MAX_EVALUATE_KEYS)
      throw new InvalidInputError(`at most ${MAX_EVALUATE_KEYS} keys per request, got ${unique.size}`, 'keys');
    if (unique.size !== all.length) all = [...unique];
  }
  return { keys: all, context: parseContext(context) };
}

const EMPTY_CONTEXT: EvaluationContext = Object.freeze({});

export function parseContext(context: unknown): EvaluationContext {
  if (context === undefined || context === null) return EMPTY_CONTEXT;
  if (!isPlainObject(context)) throw new InvalidInputError('context must be an object with userId and attributes', 'context');
  for (const field of Object.keys(context)) {
    if (field !== 'userId' && field !== 'attributes')
      throw new InvalidInputError(`unknown field context.${field}; expected userId and attributes`, `context.${field}`);
  }
  const { userId, attributes } = context;
  if (userId !== undefined && userId !== null && typeof userId !== 'string')
    throw new InvalidInputError('context.userId must be a string', 'context.userId');
  if (attributes !== undefined && attributes !== null && !isPlainObject(attributes)) {
    throw new InvalidInputError('context.attributes must be an object', 'context.attributes');
  }
  if (userId === null || attributes === null) {
    const normalized: EvaluationContext = {};
    if (typeof userId === 'string') normalized.userId = userId;
    if (attributes) normalized.attributes = attributes as Record<string, unknown>;
    return normalized;
  }
  return context as EvaluationContext;
}

/**
 * Counts one served variation of one flag, with the reason it was served (main server: the stats counter and
 * the metrics; replica: its upstream batch and the metrics).
 */
export type RecordVariation = (flagKey: string, variation: string, reason: string) => void;

/**
 * The body of a POST /v1/evaluate answer (docs/evaluation-server.md): the request checked, every key evaluated against the
 * view the SDK key fixes, each served variation counted. The main server and replicas, through Koa or the fast
 * path, all answer with this.
 */
export function evaluateAnswer(view: EnvironmentView, body: unknown, record: RecordVariation): string {
  const request = parseEvaluateRequest(body);
  const out: Record<string, EvaluationResult> = {};
  for (const key of request.keys) {
    const result = view.compiled.evaluate(key, request.context, view.killed);
    if (result.variation !== undefined) record(key, result.variation, result.reason);
    setOwn(out, key, result); // a key such as "__proto__" is answered like any other
  }
  return JSON.stringify(out);
}
