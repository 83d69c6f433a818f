import { type EvaluationResult, setOwn } from '@flagops/core';
import type { EnvironmentView } from './environment-view.js';
import { parseEvaluateRequest } from './evaluate-request.js';

/** Counts one served variation of one flag (main server: the stats counter; replica: its upstream batch). */
export type RecordVariation = (flagKey: string, variation: string) => void;

/**
 * The body of a POST /v1/evaluate answer (contract §4): the request checked, every key evaluated against the
 * view the SDK key fixes, each served variation counted. The main server and replicas, through Koa or the fast
 * path, all answer with this.
 */
export function evaluateAnswer(view: EnvironmentView, body: unknown, record: RecordVariation): string {
  const request = parseEvaluateRequest(body);
  const out: Record<string, EvaluationResult> = {};
  for (const key of request.keys) {
    const result = view.compiled.evaluate(key, request.context, view.killed);
    if (result.variation !== undefined) record(key, result.variation);
    setOwn(out, key, result); // a key such as "__proto__" is answered like any other
  }
  return JSON.stringify(out);
}
