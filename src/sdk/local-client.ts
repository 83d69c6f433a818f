import type { EvaluationContext, EvaluationResult, JsonValue, Snapshot } from '../model/index.js';
import { ClientRuntime } from './client-runtime.js';
import { contextProblem } from './context-check.js';
import { CountBuffer } from './count-buffer.js';
import { CountReporter } from './count-reporter.js';
import { errorDetails, kindOf, shapeResult, type ValueKind } from './details.js';
import { describeError } from './http.js';
import type { ResolvedOptions } from './options.js';
import { etagOf, fetchSnapshot, parseSnapshot } from './snapshot-fetch.js';
import { SnapshotStore } from './snapshot-store.js';
import type { EvaluationDetails, Widen } from './types.js';

const EMPTY_CONTEXT: EvaluationContext = Object.freeze({});

/**
 * Local mode: the environment's snapshot is kept in memory, compiled by the same core the server runs
 * (src/evaluation), and every getter evaluates in process, synchronously, without a request.
 */
export class LocalClient extends ClientRuntime {
  readonly mode = 'local' as const;
  private readonly store = new SnapshotStore();
  private readonly counts: CountBuffer | null;
  private readonly reporter: CountReporter | null;

  constructor(options: ResolvedOptions, bootstrap?: Snapshot) {
    super(options);
    this.counts = options.sendCounts ? new CountBuffer(() => this.scheduler.now()) : null;
    this.reporter = this.counts === null ? null : new CountReporter(this.http, this.counts, this.scheduler, options.countsIntervalMs, this.logger);
    if (bootstrap !== undefined) this.loadBootstrap(bootstrap);
    this.startLoop({
      refresh: () => this.refresh(),
      announce: (version) => version !== this.store.version,
    });
    this.reporter?.start();
  }

  /** The version of the snapshot being served, or null before the first one. */
  get version(): number | null {
    return this.store.version;
  }

  /** Every flag key of the snapshot being served. */
  keys(): string[] {
    return this.store.compiled === null ? [] : [...this.store.compiled.keys];
  }

  boolean(flagKey: string, defaultValue: boolean, context?: EvaluationContext): boolean {
    return this.evaluate(flagKey, defaultValue, context, 'boolean').value;
  }

  string(flagKey: string, defaultValue: string, context?: EvaluationContext): string {
    return this.evaluate(flagKey, defaultValue, context, 'string').value;
  }

  number(flagKey: string, defaultValue: number, context?: EvaluationContext): number {
    return this.evaluate(flagKey, defaultValue, context, 'number').value;
  }

  /** Any JSON value; `T` (JsonValue unless given) is the caller's claim about its shape, not checked. */
  json<T extends JsonValue = JsonValue>(flagKey: string, defaultValue: NoInfer<T>, context?: EvaluationContext): T {
    return this.evaluate(flagKey, defaultValue, context, 'any').value;
  }

  /** The whole result; the value must have the type of `defaultValue` (null accepts any). */
  details<T extends JsonValue>(flagKey: string, defaultValue: T, context?: EvaluationContext): EvaluationDetails<Widen<T>> {
    return this.evaluate(flagKey, defaultValue as Widen<T>, context, kindOf(defaultValue));
  }

  protected hasData(): boolean {
    return this.store.compiled !== null;
  }

  protected override async beforeClose(): Promise<void> {
    await this.reporter?.close();
  }

  private evaluate<T>(flagKey: string, defaultValue: T, context: EvaluationContext | undefined, kind: ValueKind): EvaluationDetails<T> {
    const compiled = this.store.compiled;
    if (compiled === null) return errorDetails(defaultValue, 'PROVIDER_NOT_READY', 'no snapshot has been loaded yet');
    const problem = contextProblem(context);
    if (problem !== null) return errorDetails(defaultValue, 'INVALID_CONTEXT', problem);
    let result: EvaluationResult;
    try {
      result = compiled.evaluate(flagKey, context ?? EMPTY_CONTEXT);
    } catch (err) {
      return errorDetails(defaultValue, 'GENERAL', describeError(err));
    }
    const details = shapeResult(flagKey, result, defaultValue, kind);
    if (this.counts !== null && details.variation !== undefined) this.counts.add(flagKey, details.variation);
    return details;
  }

  private async refresh(): Promise<void> {
    const fetched = await fetchSnapshot(this.http, this.store.etag);
    if (!fetched.modified) return;
    const previous = this.store.version;
    const keys = this.store.replace(fetched.snapshot, fetched.etag);
    // The first load is announced by the status event; change events describe changes to what was served.
    if (previous !== null && keys.length > 0) this.emitter.emit('change', { keys, version: fetched.snapshot.version });
  }

  private loadBootstrap(bootstrap: unknown): void {
    try {
      const snapshot = parseSnapshot(bootstrap);
      this.store.replace(snapshot, etagOf(snapshot.version));
      this.state.succeeded();
    } catch (err) {
      this.logger.warn('ignoring the bootstrap snapshot', { error: describeError(err) });
    }
  }
}
