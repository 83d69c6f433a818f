import { CompiledEnvironment, type EnvironmentName, type KillsFile, type SnapshotFlag, setOwn } from '@flagops/core';

/**
 * What one (project, environment) serves, immutable: a change builds a new view and swaps it in, so a
 * request in flight finishes on the view it started with. A kill builds a new view that shares the compiled
 * flags and carries a new kill overlay: no recompilation on the fast path.
 */
export class EnvironmentView {
  readonly etag: string;
  readonly killed: ReadonlySet<string>;
  private snapshotText: string | undefined;

  constructor(
    readonly org: string,
    readonly projectId: string,
    readonly projectSlug: string,
    readonly environment: EnvironmentName,
    /** Snapshot entries with `killed` false; the overlay decides kills. */
    readonly flags: Readonly<Record<string, SnapshotFlag>>,
    readonly compiled: CompiledEnvironment,
    readonly kills: KillsFile,
    readonly version: number,
    /** The commit this view was read from. */
    readonly commit: string | null,
  ) {
    this.etag = `"v${version}"`;
    this.killed = new Set(Object.keys(kills.kills));
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
  ): EnvironmentView {
    return new EnvironmentView(org, projectId, projectSlug, environment, flags, new CompiledEnvironment(flags), kills, version, commit);
  }

  /** The same flags with another kill overlay (the fast path). */
  withKills(kills: KillsFile, version: number, commit: string | null): EnvironmentView {
    return new EnvironmentView(
      this.org,
      this.projectId,
      this.projectSlug,
      this.environment,
      this.flags,
      this.compiled,
      kills,
      version,
      commit,
    );
  }

  /** The snapshot body `{ version, environment, flags }` (docs/sdk.md), serialized once per view. */
  snapshotJson(): string {
    if (this.snapshotText === undefined) {
      const flags: Record<string, SnapshotFlag> = {};
      for (const key of Object.keys(this.flags)) {
        const entry = this.flags[key];
        setOwn(flags, key, this.killed.has(key) ? { ...entry, killed: true } : entry);
      }
      this.snapshotText = JSON.stringify({ version: this.version, environment: this.environment, flags });
    }
    return this.snapshotText;
  }
}
