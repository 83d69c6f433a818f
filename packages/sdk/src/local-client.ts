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
  setOwn,
} from '@flagops/core';
import { CountBuffer, CountReporter } from './counts.js';
import { checkFlagEntry, checkSegmentEntry } from './entry-shape.js';
import { describeError, etagOf, fetchSnapshot, parseSnapshot } from './http.js';
import type { ResolvedOptions } from './options.js';
import { contextProblem, errorDetails, kindOf, shapeResult, type ValueKind } from './results.js';
import { ClientRuntime } from './runtime.js';
import { fetchSnapshotSince, parsePatch, type SnapshotPatch } from './snapshot-delta.js';
import type { EvaluationDetails, Widen } from './types.js';
import type { VersionChange } from './updates.js';

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
      announce: (version, change) => this.announced(version, change),
      version: () => this.store.patchable,
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
    if (compiled === null) {
      const why = this.state.failure;
      return errorDetails(defaultValue, 'PROVIDER_NOT_READY', `no snapshot has been loaded yet${why === null ? '' : `: ${why}`}`);
    }
    const problem = contextProblem(context);
    if (problem !== null) return errorDetails(defaultValue, 'INVALID_CONTEXT', problem);
    let result: EvaluationResult;
    try {
      result = compiled.evaluate(flagKey, context ?? EMPTY_CONTEXT);
    } catch (err) {
      return errorDetails(defaultValue, 'GENERAL', describeError(err));
    }
    const details = shapeResult(flagKey, result, defaultValue, kind);
    if (details.variation !== undefined) {
      if (this.counts !== null) this.counts.add(flagKey, details.variation);
      if (this.exposures !== null) this.exposures.exposure(flagKey, details.variation, context?.userId);
    }
    return details;
  }

  // Polling: with a snapshot held, asks for the delta since its version (If-None-Match too) and applies it; the
  // whole snapshot comes when the server no longer knows that version, or when the delta does not apply. An
  // answer that arrives after a stream patch moved the snapshot on is dropped: the stream brings what is newer.
  // A bootstrap is replaced whole, asked for without If-None-Match: a 304 would only say that the version
  // numbers are equal, not that the bootstrap's content is the server's.
  private async refresh(): Promise<void> {
    const held = this.store.patchable;
    if (held === null) return this.refreshWhole(null, this.store.version);
    const answer = await fetchSnapshotSince(this.http, this.store.etag, held);
    if (answer.kind === 'unchanged' || this.store.version !== held) return;
    if (answer.kind === 'full') return this.replaced(answer.snapshot, answer.etag);
    if (answer.since !== held || !this.store.sameEnvironment(answer.environment)) return this.refreshWhole(null, held);
    try {
      this.patched(answer.patch, answer.version, answer.etag);
    } catch (err) {
      this.logger.warn('a delta did not apply; fetching the whole snapshot', { error: describeError(err) });
      await this.refreshWhole(null, held);
    }
  }

  private async refreshWhole(etag: string | null, held: number | null): Promise<void> {
    const fetched = await fetchSnapshot(this.http, etag);
    if (fetched.modified && this.store.version === held) this.replaced(fetched.snapshot, fetched.etag);
  }

  // A stream event: a patch from the version held is applied at once, without a request; anything else (another
  // `since`, no patch, a patch that does not apply) asks the loop for a refresh.
  private announced(version: number, change: VersionChange | undefined): boolean {
    if (version === this.store.version) return false;
    if (change?.patch === undefined || change.since !== this.store.patchable) return true;
    try {
      this.patched(parsePatch(change.patch), version, etagOf(version));
      return false;
    } catch (err) {
      this.logger.warn('a stream patch did not apply; fetching the snapshot', { error: describeError(err) });
      return true;
    }
  }

  private replaced(snapshot: Snapshot, etag: string): void {
    const previous = this.store.version;
    const keys = this.store.replace(snapshot, etag);
    // The first load is announced by the status event; change events describe changes to what was served.
    if (previous !== null && keys.length > 0) this.emitter.emit('change', { keys, version: snapshot.version });
  }

  private patched(patch: SnapshotPatch, version: number, etag: string): void {
    const keys = this.store.apply(patch, version, etag);
    if (keys.length > 0) this.emitter.emit('change', { keys, version });
  }

  private loadBootstrap(bootstrap: unknown): void {
    try {
      const snapshot = parseSnapshot(bootstrap);
      this.store.replace(snapshot, etagOf(snapshot.version), false);
      this.state.succeeded();
    } catch (err) {
      this.logger.warn('ignoring the bootstrap snapshot', { error: describeError(err) });
    }
  }
}

/** The keys of the segments a flag's rules name. */
function segmentsOf(entry: SnapshotFlag): string[] {
  const keys: string[] = [];
  for (const rule of entry.rules ?? [])
    for (const c of rule.conditions ?? []) if (isSegmentCondition(c) && !keys.includes(c.value)) keys.push(c.value);
  return keys;
}

/** Two independent 32-bit hashes: a missed change event would need both to collide. */
function fingerprint(entry: SnapshotFlag | SnapshotSegment): string {
  const json = JSON.stringify(entry);
  return `${murmur3_32(json, 0x9747b28c)}:${murmur3_32(json, 0x5bd1e995)}`;
}

/**
 * The snapshot local mode evaluates: compiled once per version with the same core the server uses. The
 * snapshot's entries are kept (patches and deltas apply to them) with a fingerprint of each, so a change event
 * names exactly the flags that changed; an entry a patch leaves alone keeps its fingerprint, unhashed.
 */
export class SnapshotStore {
  compiled: CompiledEnvironment | null = null;
  version: number | null = null;
  etag: string | null = null;
  private environment: unknown;
  private flags: Record<string, SnapshotFlag> = {};
  private segments: Record<string, SnapshotSegment> = {};
  private entryPrints = new Map<string, string>();
  private segmentPrints = new Map<string, string>();
  private fingerprints = new Map<string, string>();

  /** Whether what is held came from the server (a bootstrap did not), and so patches and deltas may apply to it. */
  private served = false;

  /**
   * Compiles and swaps in `snapshot`; returns the keys added, changed or removed. A snapshot that does not
   * compile throws and leaves the last good one in place. `served` is false for a bootstrap: nothing says its
   * content is what the server served at its version, so the first refresh replaces it whole.
   */
  replace(snapshot: Snapshot, etag: string, served = true): string[] {
    const keys = this.load(snapshot.flags, snapshot.segments ?? {}, snapshot.version, etag);
    this.environment = snapshot.environment;
    this.served = served;
    return keys;
  }

  /** The version patches and deltas apply to: the one held, when the server served it; null otherwise. */
  get patchable(): number | null {
    return this.served ? this.version : null;
  }

  /** Whether a delta for `environment` applies here. */
  sameEnvironment(environment: unknown): boolean {
    return this.environment === environment;
  }

  /**
   * Applies a patch or delta to the snapshot held, taking it to `version`: null removes a key. Throws, and
   * keeps what it serves, when nothing is held or the result does not compile.
   */
  apply(patch: SnapshotPatch, version: number, etag: string): string[] {
    if (this.compiled === null) throw new Error('no snapshot to apply a patch to');
    const flags = { ...this.flags };
    for (const key of Object.keys(patch.flags)) {
      const entry = patch.flags[key];
      if (entry === null) delete flags[key];
      else setOwn(flags, key, entry);
    }
    const segments = { ...this.segments };
    for (const key of Object.keys(patch.segments)) {
      const segment = patch.segments[key];
      if (segment === null) delete segments[key];
      else setOwn(segments, key, segment);
    }
    return this.load(flags, segments, version, etag);
  }

  private load(flags: Record<string, SnapshotFlag>, segments: Record<string, SnapshotSegment>, version: number, etag: string): string[] {
    for (const key of Object.keys(flags)) checkFlagEntry(key, flags[key] as unknown as Record<string, unknown>);
    for (const key of Object.keys(segments)) checkSegmentEntry(key, segments[key] as unknown as Record<string, unknown>);
    const compiled = new CompiledEnvironment(flags, segments);
    const segmentPrints = new Map<string, string>();
    for (const key of Object.keys(segments)) segmentPrints.set(key, this.printOf(this.segments, this.segmentPrints, segments, key));
    const entryPrints = new Map<string, string>();
    const next = new Map<string, string>();
    const changed = new Set<string>();
    for (const key of compiled.keys) {
      // A flag's results change with the segments its rules name, so their prints are part of its own.
      const entry = flags[key];
      const own = this.printOf(this.flags, this.entryPrints, flags, key);
      entryPrints.set(key, own);
      let print = own;
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
        if ((flags[key].prerequisites ?? []).some((p) => changed.has(p.flag))) {
          changed.add(key);
          grew = true;
        }
      }
    }
    this.compiled = compiled;
    this.flags = flags;
    this.segments = segments;
    this.entryPrints = entryPrints;
    this.segmentPrints = segmentPrints;
    this.fingerprints = next;
    this.version = version;
    this.etag = etag;
    return [...changed];
  }

  /** The fingerprint of `entries[key]`: the one already made when it is the entry held before, unchanged. */
  private printOf<T extends SnapshotFlag | SnapshotSegment>(
    before: Record<string, T>,
    prints: Map<string, string>,
    entries: Record<string, T>,
    key: string,
  ): string {
    const known = Object.hasOwn(before, key) && before[key] === entries[key] ? prints.get(key) : undefined;
    return known ?? fingerprint(entries[key]);
  }
}
