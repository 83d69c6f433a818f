import {
  CompiledEnvironment,
  type EnvironmentName,
  type FlagChanges,
  type KillsFile,
  type SnapshotFlag,
  type SnapshotSegment,
} from '@flagops/core';
import { applyKills, type KillOverlay } from '../../features/kill/apply-kills.js';
import { snapshotText } from './snapshot-text.js';

/**
 * What one (project, environment) serves, immutable: a change builds a new view and swaps it in, so a
 * request in flight finishes on the view it started with. A kill builds a new view that shares the compiled
 * flags and carries a new kill overlay (applyKills): no recompilation on the fast path. A change of flags
 * (withFlags) compiles and serializes only the entries that are not the same objects as in the view before.
 */
export class EnvironmentView {
  readonly kills: KillsFile;
  readonly killed: ReadonlySet<string>;
  readonly version: number;
  readonly etag: string;
  /** The commit this view was read from. */
  readonly commit: string | null;
  /**
   * The version of the view this one was made from by a new kill overlay alone (withKills): both have the same
   * flags and segments. Undefined for a view built from flags. The replica feed sends such a view as a kill.
   */
  readonly baseVersion: number | undefined;
  private snapshotText: string | undefined;

  private constructor(
    readonly org: string,
    readonly projectId: string,
    readonly projectSlug: string,
    readonly environment: EnvironmentName,
    /**
     * Snapshot entries with `killed` false; the overlay decides kills. Entries are immutable, and one that did
     * not change is the same object as in the view before (OrganisationServing keeps it), so comparing two
     * views' entries by reference finds what changed (entries of different objects may still be equal).
     */
    readonly flags: Readonly<Record<string, SnapshotFlag>>,
    readonly compiled: CompiledEnvironment,
    overlay: KillOverlay,
    /** The project's segments, keyed by segment key. */
    readonly segments: Readonly<Record<string, SnapshotSegment>>,
    baseVersion?: number,
  ) {
    this.kills = overlay.kills;
    this.killed = overlay.killed;
    this.version = overlay.version;
    this.etag = overlay.etag;
    this.commit = overlay.commit;
    this.baseVersion = baseVersion;
  }

  static build(
    org: string,
    projectId: string,
    projectSlug: string,
    environment: EnvironmentName,
    flags: Record<string, SnapshotFlag>,
    kills: KillsFile,
    version: number,
    commit: string | null,
    segments: Record<string, SnapshotSegment> = {},
  ): EnvironmentView {
    const compiled = new CompiledEnvironment(flags, segments);
    const overlay = applyKills(flags, kills, version, commit);
    return new EnvironmentView(org, projectId, projectSlug, environment, flags, compiled, overlay, segments);
  }

  /**
   * The same (project, environment) with other flags or segments: an entry that is the same object as in this
   * view keeps its compiled flag and its JSON, and the same segments object keeps the compiled segments; a
   * change of segments compiles every flag again. `changes`, when the caller knows them, spares comparing
   * every entry: the keys of `flags` in order, and those whose entries are not this view's.
   */
  withFlags(
    flags: Readonly<Record<string, SnapshotFlag>>,
    segments: Readonly<Record<string, SnapshotSegment>>,
    kills: KillsFile,
    version: number,
    commit: string | null,
    changes?: FlagChanges,
  ): EnvironmentView {
    const { org, projectId, projectSlug, environment } = this;
    let compiled: CompiledEnvironment;
    if (segments !== this.segments) compiled = new CompiledEnvironment(flags, segments);
    else if (changes) compiled = this.compiled.withChanges(flags, changes);
    else compiled = this.compiled.withFlags(flags, this.flags);
    const overlay = applyKills(flags, kills, version, commit);
    return new EnvironmentView(org, projectId, projectSlug, environment, flags, compiled, overlay, segments);
  }

  /** The same flags under another kills file (the fast path): only the overlay is made anew, by applyKills. */
  withKills(kills: KillsFile, version: number, commit: string | null): EnvironmentView {
    const { org, projectId, projectSlug, environment, flags, compiled, segments } = this;
    const overlay = applyKills(flags, kills, version, commit);
    return new EnvironmentView(org, projectId, projectSlug, environment, flags, compiled, overlay, segments, this.version);
  }

  /**
   * The snapshot body `{ version, environment, flags, segments }` (docs/sdk.md), made once per view from each
   * entry's cached JSON (snapshot-text.ts): unchanged entries are not serialized again.
   */
  snapshotJson(): string {
    this.snapshotText ??= snapshotText(this.version, this.environment, this.compiled.keys, this.flags, this.killed, this.segments);
    return this.snapshotText;
  }
}
