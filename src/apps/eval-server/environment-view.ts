import { CompiledEnvironment, type EnvironmentName, type KillsFile, type SnapshotFlag, type SnapshotSegment, setOwn } from '@flagops/core';
import { applyKills, type KillOverlay } from '../../features/kill/apply-kills.js';

/**
 * What one (project, environment) serves, immutable: a change builds a new view and swaps it in, so a
 * request in flight finishes on the view it started with. A kill builds a new view that shares the compiled
 * flags and carries a new kill overlay (applyKills): no recompilation on the fast path.
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
    /** Snapshot entries with `killed` false; the overlay decides kills. */
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

  /** The same flags under another kills file (the fast path): only the overlay is made anew, by applyKills. */
  withKills(kills: KillsFile, version: number, commit: string | null): EnvironmentView {
    const { org, projectId, projectSlug, environment, flags, compiled, segments } = this;
    const overlay = applyKills(flags, kills, version, commit);
    return new EnvironmentView(org, projectId, projectSlug, environment, flags, compiled, overlay, segments, this.version);
  }

  /** The snapshot body `{ version, environment, flags, segments }` (docs/sdk.md), serialized once per view. */
  snapshotJson(): string {
    if (this.snapshotText === undefined) {
      const flags: Record<string, SnapshotFlag> = {};
      for (const key of Object.keys(this.flags)) {
        const entry = this.flags[key];
        setOwn(flags, key, this.killed.has(key) ? { ...entry, killed: true } : entry);
      }
      this.snapshotText = JSON.stringify({ version: this.version, environment: this.environment, flags, segments: this.segments });
    }
    return this.snapshotText;
  }
}
