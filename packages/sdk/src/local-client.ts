import {
  CompiledEnvironment,
  type EvaluationContext,
  type EvaluationResult,
  isSegmentCondition,
  type JsonValue,
  murmur3_32,
  type Snapshot,
  type SnapshotFlag,
  type SnapshotSegment,
} from '@flagops/core';
import { CountBuffer, CountReporter } from './counts.js';
import { describeError, etagOf, fetchSnapshot, parseSnapshot } from './http.js';
import type { ResolvedOptions } from './options.js';
import { contextProblem, errorDetails, kindOf, shapeResult, type ValueKind } from './results.js';
import { ClientRuntime } from './runtime.js';
import type { EvaluationDetails, Widen } from './types.js';

const EMPTY_CONTEXT: EvaluationContext = Object.freeze({});

/**
 * Local mode: the environment's snapshot is kept in memory, compiled by the same core the server runs
 * (@flagops/core), and every getter evaluates in process, synchronously, without a request.
 */
export class LocalClient extends ClientRuntime {
  readonly mode = 'local' as const;
  private readonly store = new SnapshotStore();
  private readonly counts: CountBuffer | null;
  private readonly reporter: CountReporter | null;

  /** @internal */
  constructor(options: ResolvedOptions, bootstrap?: Snapshot) {
    super(options);
    this.counts = options.sendCounts ? new CountBuffer(() => this.scheduler.now()) : null;
    this.reporter =
      this.counts === null ? null : new CountReporter(this.http, this.counts, this.scheduler, options.countsIntervalMs, this.logger);
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

  /** @internal */
  protected hasData(): boolean {
    return this.store.compiled !== null;
  }

  /** @internal */
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

/** Two independent 32-bit hashes: a missed change event would need both to collide. */
/** The keys of the segments a flag's rules name. */
function segmentsOf(entry: SnapshotFlag): string[] {
  const keys: string[] = [];
  for (const rule of entry.rules ?? [])
    for (const c of rule.conditions ?? []) if (isSegmentCondition(c) && !keys.includes(c.value)) keys.push(c.value);
  return keys;
}

function fingerprint(entry: SnapshotFlag | SnapshotSegment): string {
  const json = JSON.stringify(entry);
  return `${murmur3_32(json, 0x9747b28c)}:${murmur3_32(json, 0x5bd1e995)}`;
}

/**
 * The snapshot local mode evaluates: compiled once per version with the same core the server uses. Only a
 * fingerprint of each entry is kept besides the compiled flags, so memory is the compiled form plus a few
 * bytes a flag, and a change event can still name exactly the flags that changed.
 */
export class SnapshotStore {
  compiled: CompiledEnvironment | null = null;
  version: number | null = null;
  etag: string | null = null;
  private fingerprints = new Map<string, string>();

  /**
   * Compiles and swaps in `snapshot`; returns the keys added, changed or removed. A snapshot that does not
   * compile throws and leaves the last good one in place.
   */
  replace(snapshot: Snapshot, etag: string): string[] {
    const segments = snapshot.segments ?? {};
    const compiled = new CompiledEnvironment(snapshot.flags, segments);
    const segmentPrints = new Map<string, string>();
    for (const key of Object.keys(segments)) segmentPrints.set(key, fingerprint(segments[key]));
    const next = new Map<string, string>();
    const changed = new Set<string>();
    for (const key of compiled.keys) {
      // A flag's results change with the segments its rules name, so their prints are part of its own.
      const entry = snapshot.flags[key];
      let print = fingerprint(entry);
      for (const segment of segmentsOf(entry)) print += `:${segmentPrints.get(segment) ?? '-'}`;
      next.set(key, print);
      if (this.fingerprints.get(key) !== print) changed.add(key);
    }
    for (const key of this.fingerprints.keys()) if (!next.has(key)) changed.add(key);
    // ... and with its prerequisites' results: a flag whose prerequisite changed changed too.
    for (let grew = changed.size > 0; grew; ) {
      grew = false;
      for (const key of compiled.keys) {
        if (changed.has(key)) continue;
        if ((snapshot.flags[key].prerequisites ?? []).some((p) => changed.has(p.flag))) {
          changed.add(key);
          grew = true;
        }
      }
    }
    this.compiled = compiled;
    this.fingerprints = next;
    this.version = snapshot.version;
    this.etag = etag;
    return [...changed];
  }
}
