import { type EvaluationContext, type EvaluationResult, frozenCopy, type JsonValue } from '@flagops/core';
import { contextJson } from './context-json.js';
import { describeError, etagOf, HttpError, httpError, probeSnapshotVersion } from './http.js';
import type { ResolvedOptions } from './options.js';
import { contextProblem, errorDetails, kindOf, shapeResult, type ValueKind } from './results.js';
import { ClientRuntime } from './runtime.js';
import type { EvaluationDetails, Widen } from './types.js';

/**
 * Remote mode: each (flag, context) is evaluated once by POST /v1/evaluate and cached until the environment's
 * version changes, which the stream announces (or a HEAD /v1/snapshot poll answering other than 304 reveals).
 * The server counts these evaluations itself, so this mode reports no counts.
 */
export class RemoteClient extends ClientRuntime {
  readonly mode = 'remote' as const;
  private knownVersion: number | null = null;
  private readonly cache = new Map<string, { flagKey: string; result: EvaluationResult }>();
  private readonly pending = new Map<string, Promise<EvaluationResult>>();

  /** @internal */
  constructor(options: ResolvedOptions) {
    super(options);
    this.startLoop({
      refresh: async () => {
        const version = await probeSnapshotVersion(this.http, this.knownVersion === null ? null : etagOf(this.knownVersion));
        if (version !== null) this.learn(version);
      },
      announce: (version) => {
        this.learn(version);
        return false; // the announcement is all remote mode needs
      },
    });
  }

  /** The environment's version as last learned, or null before. */
  get version(): number | null {
    return this.knownVersion;
  }

  boolean(flagKey: string, defaultValue: boolean, context?: EvaluationContext): Promise<boolean> {
    return this.evaluate(flagKey, defaultValue, context, 'boolean').then((d) => d.value);
  }

  string(flagKey: string, defaultValue: string, context?: EvaluationContext): Promise<string> {
    return this.evaluate(flagKey, defaultValue, context, 'string').then((d) => d.value);
  }

  number(flagKey: string, defaultValue: number, context?: EvaluationContext): Promise<number> {
    return this.evaluate(flagKey, defaultValue, context, 'number').then((d) => d.value);
  }

  /** Any JSON value; `T` (JsonValue unless given) is the caller's claim about its shape, not checked. */
  json<T extends JsonValue = JsonValue>(flagKey: string, defaultValue: NoInfer<T>, context?: EvaluationContext): Promise<T> {
    return this.evaluate(flagKey, defaultValue, context, 'any').then((d) => d.value);
  }

  /** The whole result; the value must have the type of `defaultValue` (null accepts any). */
  details<T extends JsonValue>(flagKey: string, defaultValue: T, context?: EvaluationContext): Promise<EvaluationDetails<Widen<T>>> {
    return this.evaluate(flagKey, defaultValue as Widen<T>, context, kindOf(defaultValue));
  }

  /** @internal */
  protected hasData(): boolean {
    return this.knownVersion !== null;
  }

  private async evaluate<T>(
    flagKey: string,
    defaultValue: T,
    context: EvaluationContext | undefined,
    kind: ValueKind,
  ): Promise<EvaluationDetails<T>> {
    if (this.knownVersion === null)
      return errorDetails(defaultValue, 'PROVIDER_NOT_READY', 'the evaluation server has not been reached yet');
    const problem = contextProblem(context);
    if (problem !== null) return errorDetails(defaultValue, 'INVALID_CONTEXT', problem);
    try {
      const text = context === undefined ? null : contextJson(context);
      const cacheKey = `${flagKey}\u0000${text ?? '{}'}`;
      const cached = this.cache.get(cacheKey);
      const result = cached !== undefined ? cached.result : await this.fetchResult(cacheKey, flagKey, text);
      return this.exposed(flagKey, shapeResult(flagKey, { ...result }, defaultValue, kind), context);
    } catch (err) {
      // The request is ours but for the context: a refusal of it (too deep, too large) is the context's.
      const refusedContext = err instanceof HttpError && (err.status === 400 || err.status === 413);
      return errorDetails(defaultValue, refusedContext ? 'INVALID_CONTEXT' : 'GENERAL', describeError(err));
    }
  }

  // With sendExposures, what the application is given is an exposure.
  private exposed<T>(flagKey: string, details: EvaluationDetails<T>, context: EvaluationContext | undefined): EvaluationDetails<T> {
    if (this.exposures !== null && details.variation !== undefined) this.exposures.exposure(flagKey, details.variation, context?.userId);
    return details;
  }

  // One request per (flag, context) at a time; the answer is cached unless the version moved meanwhile.
  private fetchResult(cacheKey: string, flagKey: string, contextText: string | null): Promise<EvaluationResult> {
    const inFlight = this.pending.get(cacheKey);
    if (inFlight !== undefined) return inFlight;
    const version = this.knownVersion;
    const key = JSON.stringify(flagKey);
    const body = contextText === null ? `{"key":${key}}` : `{"key":${key},"context":${contextText}}`;
    const request = this.http
      .call('/v1/evaluate', { method: 'POST', headers: { 'content-type': 'application/json' }, body }, async (res) => {
        if (res.status !== 200) throw await httpError(res, 'POST /v1/evaluate');
        const results = (await res.json()) as Record<string, EvaluationResult>;
        const result = Object.hasOwn(results, flagKey) ? results[flagKey] : undefined;
        if (typeof result !== 'object' || result === null || typeof result.reason !== 'string')
          throw new Error(`POST /v1/evaluate answered without ${flagKey}`);
        // Frozen like local mode's values: a caller changing a value must not change the cache.
        return { ...result, value: frozenCopy(result.value) };
      })
      .then((result) => {
        if (this.knownVersion === version) this.remember(cacheKey, flagKey, result);
        return result;
      })
      .finally(() => this.pending.delete(cacheKey));
    this.pending.set(cacheKey, request);
    return request;
  }

  private remember(cacheKey: string, flagKey: string, result: EvaluationResult): void {
    if (this.cache.size >= this.options.remoteCacheSize) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(cacheKey, { flagKey, result });
  }

  // A new version invalidates every cached result. Which of them changed is unknown without asking again, so
  // the change event names every flag that had a cached result: the ones the application has been reading.
  private learn(version: number): void {
    if (version === this.knownVersion) return;
    const previous = this.knownVersion;
    this.knownVersion = version;
    const keys = [...new Set([...this.cache.values()].map((entry) => entry.flagKey))];
    this.cache.clear();
    this.state.succeeded();
    if (previous !== null) this.emitter.emit('change', { keys, version });
  }
}
