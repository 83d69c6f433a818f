import { ENVIRONMENTS, type EnvironmentName } from '@flagops/core';

/** What a config serves, by itself and when killed: summary keys (ServedSummary.key). */
export interface ConfigSummary {
  key: string;
  offKey: string;
}

/** What history says of one flag: when its file came, what each environment serves and since when. */
export interface FlagRecord {
  /** Epoch ms of the commit that added the flag file; undefined while only its configs are known. */
  createdAt?: number;
  configs: Partial<Record<EnvironmentName, ConfigSummary>>;
  killed: EnvironmentName[];
  /**
   * While the flag is archived, the summary key of its `defaultValue`, which every environment serves then
   * unless killed; absent while it is not.
   */
  archivedKey?: string;
  /** Per environment, when it reached what it serves now (epoch ms). */
  since: Partial<Record<EnvironmentName, number>>;
}

/**
 * The summary key an environment serves, in evaluation's order: valueOff while killed, the flag's defaultValue
 * while archived, else what its config serves.
 */
export function effectiveKey(record: FlagRecord, env: EnvironmentName): string | undefined {
  const config = record.configs[env];
  if (!config) return undefined;
  if (record.killed.includes(env)) return config.offKey;
  return record.archivedKey ?? config.key;
}

/**
 * Per `<slug>/<key>`, what history says; changed a commit at a time, oldest first. A change that leaves an
 * environment serving what it served keeps its `since`: editing a description or a rule that changes nothing
 * served does not make a rolled-out flag look fresh.
 */
export class FlagHistory {
  readonly flags = new Map<string, FlagRecord>();
  /** Per `<slug>/<env>`, the flag keys killed there. */
  readonly kills = new Map<string, string[]>();

  private record(id: string): FlagRecord {
    let record = this.flags.get(id);
    if (!record) {
      record = { configs: {}, killed: [], since: {} };
      this.flags.set(id, record);
    }
    return record;
  }

  flagAdded(id: string, at: number): void {
    const record = this.record(id);
    record.createdAt ??= at;
  }

  /**
   * The flag file says the flag is archived, serving `defaultKey` (its defaultValue's summary key), or not
   * (undefined). A restored flag has served what its configs serve only since it was restored.
   */
  archiveChanged(id: string, defaultKey: string | undefined, at: number): void {
    const record = this.record(id);
    if (record.archivedKey === defaultKey) return;
    const before = ENVIRONMENTS.map((env) => effectiveKey(record, env));
    if (defaultKey === undefined) delete record.archivedKey;
    else record.archivedKey = defaultKey;
    ENVIRONMENTS.forEach((env, i) => {
      const after = effectiveKey(record, env);
      if (after !== undefined && after !== before[i]) record.since[env] = at;
    });
  }

  flagDeleted(id: string): void {
    this.flags.delete(id);
  }

  /** A config added or changed (`summary`), or deleted (undefined). */
  configChanged(id: string, env: EnvironmentName, summary: ConfigSummary | undefined, at: number): void {
    this.change(id, env, at, (record) => {
      if (summary) record.configs[env] = summary;
      else delete record.configs[env];
    });
  }

  /** The kills of a project's environment are now exactly `killed` (flag keys); only the flags whose kill changed are touched. */
  killsChanged(slug: string, env: EnvironmentName, killed: ReadonlySet<string>, at: number): void {
    const where = `${slug}/${env}`;
    const before = new Set(this.kills.get(where) ?? []);
    for (const key of new Set([...before, ...killed])) {
      const now = killed.has(key);
      if (now === before.has(key)) continue;
      this.change(`${slug}/${key}`, env, at, (r) => {
        r.killed = now ? [...r.killed, env] : r.killed.filter((e) => e !== env);
      });
    }
    if (killed.size === 0) this.kills.delete(where);
    else this.kills.set(where, [...killed]);
  }

  private change(id: string, env: EnvironmentName, at: number, apply: (record: FlagRecord) => void): void {
    const record = this.record(id);
    const before = effectiveKey(record, env);
    apply(record);
    const after = effectiveKey(record, env);
    if (after === undefined) delete record.since[env];
    else if (after !== before) record.since[env] = at;
  }

  toJSON(): { flags: Array<[string, FlagRecord]>; kills: Array<[string, string[]]> } {
    return { flags: [...this.flags], kills: [...this.kills] };
  }

  static fromJSON(value: unknown): FlagHistory | undefined {
    const { flags, kills } = (value ?? {}) as { flags?: unknown; kills?: unknown };
    if (!Array.isArray(flags) || !Array.isArray(kills)) return undefined;
    const history = new FlagHistory();
    for (const entry of flags) {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !isRecord(entry[1])) return undefined;
      history.flags.set(entry[0], entry[1]);
    }
    for (const entry of kills) {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !Array.isArray(entry[1])) return undefined;
      history.kills.set(entry[0], entry[1]);
    }
    return history;
  }
}

function isRecord(value: unknown): value is FlagRecord {
  const r = value as Partial<FlagRecord> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    (r.createdAt === undefined || typeof r.createdAt === 'number') &&
    (r.archivedKey === undefined || typeof r.archivedKey === 'string') &&
    typeof r.configs === 'object' &&
    Array.isArray(r.killed) &&
    r.killed.every((e) => (ENVIRONMENTS as readonly string[]).includes(e)) &&
    typeof r.since === 'object'
  );
}
