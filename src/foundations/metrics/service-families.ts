import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** One served project environment: what `flagops_snapshot_version` reports. */
export interface ServedSnapshot {
  org: string;
  projectSlug: string;
  environment: string;
  version: number;
}

/**
 * The gauges of what an evaluation server serves, read when Prometheus scrapes: snapshot versions (the same on
 * every server reading the same commit, so replicas lagging behind show), open streams, and invalid files.
 */
export function registerServingFamilies(
  registry: Registry,
  source: {
    snapshots(): Iterable<ServedSnapshot>;
    streamClients(): number;
    /** Per organisation, the files on main that are invalid and held back; omitted on replicas. */
    invalidFiles?(): Iterable<{ org: string; count: number }>;
    /** The organisations whose repository cannot be read or written now; omitted on replicas. */
    storageFaults?(): Iterable<{ org: string; kind: 'read' | 'write' }>;
  },
): void {
  new Gauge({
    name: 'flagops_snapshot_version',
    help: 'The snapshot version served per project (slug) and environment; org is the organisation.',
    labelNames: ['project', 'environment', 'org'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of source.snapshots()) this.set({ project: s.projectSlug, environment: s.environment, org: s.org }, s.version);
    },
  });
  new Gauge({
    name: 'flagops_stream_clients',
    help: 'Open /v1/stream connections (SDKs streaming snapshot changes).',
    registers: [registry],
    collect() {
      this.set(source.streamClients());
    },
  });
  const invalidFiles = source.invalidFiles;
  if (invalidFiles) {
    new Gauge({
      name: 'flagops_invalid_files',
      help: 'Files on main that are invalid; the flags and projects they belong to serve their last valid state.',
      labelNames: ['org'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const { org, count } of invalidFiles()) this.set({ org }, count);
      },
    });
  }
  const storageFaults = source.storageFaults;
  if (storageFaults) {
    new Gauge({
      name: 'flagops_storage_faults',
      help: "1 while an organisation's flags repository cannot be read (kind=read: a missing or corrupt object) or written (kind=write: read-only, a full disk).",
      labelNames: ['org', 'kind'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const { org, kind } of storageFaults()) this.set({ org, kind }, 1);
      },
    });
  }
}

/** Kill propagation buckets, in seconds: a kill is served in milliseconds; seconds mean trouble. */
const KILL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The control plane's families: commits by action, how long kills take to be served, failed housekeeping. */
export class ControlFamilies {
  private readonly commits: Counter<'action'>;
  private readonly killPropagation: Histogram;
  private readonly housekeepingFailures: Counter<'org' | 'step'>;

  constructor(registry: Registry) {
    this.commits = new Counter({
      name: 'flagops_commits_total',
      help: 'Commits the service made to the flags repositories, by action (kill, config_update, ...).',
      labelNames: ['action'] as const,
      registers: [registry],
    });
    this.killPropagation = new Histogram({
      name: 'flagops_kill_propagation_seconds',
      help: 'From a kill (or cleared kill) request to the evaluation server serving it.',
      buckets: KILL_BUCKETS,
      registers: [registry],
    });
    this.housekeepingFailures = new Counter({
      name: 'flagops_housekeeping_failures_total',
      help: 'Runs of the packing of a flags repository (git repack, git gc) that failed, by organisation and step.',
      labelNames: ['org', 'step'] as const,
      registers: [registry],
    });
  }

  countHousekeepingFailure(org: string, step: string): void {
    this.housekeepingFailures.inc({ org, step });
  }

  countCommit(action: string): void {
    this.commits.inc({ action });
  }

  /** `seconds`: from the kill request's arrival to the evaluation server serving the new kills. */
  observeKillPropagation(seconds: number): void {
    this.killPropagation.observe(seconds);
  }
}

/** What a replica's metrics read of the sync with its upstreams. */
export interface ReplicaSyncGauges {
  connected: boolean;
  lastContactAt: number | null;
  following: string;
  failovers: Partial<Record<string, number>>;
}

/**
 * A replica's view of its upstreams: whether it is connected, when it last heard from one (the sync lag
 * alert), which one it follows and how often it moved to another.
 */
export function registerReplicaFamilies(registry: Registry, status: ReplicaSyncGauges): void {
  new Gauge({
    name: 'flagops_replica_upstream_following',
    help: 'The control plane the replica follows (or is trying to reach): 1, labelled with its origin.',
    labelNames: ['upstream'],
    registers: [registry],
    collect() {
      this.reset();
      this.set({ upstream: status.following }, 1);
    },
  });
  new Counter({
    name: 'flagops_replica_failovers_total',
    help: 'Moves of the replica from one control plane to another, by why the one it left failed.',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, count] of Object.entries(status.failovers)) if (count) this.inc({ reason }, count);
    },
  });
  new Gauge({
    name: 'flagops_replica_upstream_connected',
    help: '1 while the replica is connected to its control plane, 0 otherwise.',
    registers: [registry],
    collect() {
      this.set(status.connected ? 1 : 0);
    },
  });
  new Gauge({
    name: 'flagops_replica_last_contact_timestamp_seconds',
    help: 'When the replica last heard from its control plane (a change, or the stream heartbeat every 15 s), Unix seconds; 0 before the first contact.',
    registers: [registry],
    collect() {
      this.set(status.lastContactAt === null ? 0 : status.lastContactAt / 1000);
    },
  });
}
