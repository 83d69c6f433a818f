import { type AuditAction, ENVIRONMENTS, type EnvironmentName, type KillEntry, type KillsFile } from '@flagops/core';
import { classifyPath, layout } from '../../foundations/repository/layout.js';
import { parseRepositoryFile } from '../../foundations/repository/parse-file.js';
import type { ChangedPath, ChangeType } from '../../foundations/storage/index.js';

/** What describing a commit from its diff needs of the store. */
export interface DiffReader {
  changedPaths(oid: string): Promise<ChangedPath[]>;
  readBlob(oid: string): Promise<string>;
}

/** One (project, flag, environment) change read from a diff; the commit supplies id, time and actor. */
export interface DerivedChange {
  action: AuditAction;
  projectSlug: string | null;
  flagKey: string | null;
  environment: EnvironmentName | null;
  reason?: string;
  /** For segment_update and segment_delete. */
  segmentKey?: string;
}

/**
 * Describes a commit without `Flagops-*` trailers (an engineer's push) from its diff against its first parent:
 * project.yaml added → project_create, deleted → project_delete; a flag file added → flag_create (its new configs are part of it),
 * deleted → flag_delete, modified → flag_archive when archivedAt became set, else flag_update; a config added
 * or modified → config_update; a kills.yaml change → kill / clear_kill per flag key; a segment file added or modified → segment_update, deleted → segment_delete (with segmentKey); anything else under
 * projects/ → change. Files outside projects/ are not flags and give nothing. Sorted, without duplicates.
 */
export async function describeDiff(oid: string, reader: DiffReader): Promise<DerivedChange[]> {
  return describeChanges(await reader.changedPaths(oid), reader);
}

/** The changes a set of changed files makes, by the rules of describeDiff (also what a push is checked by). */
export async function describeChanges(paths: readonly ChangedPath[], reader: Pick<DiffReader, 'readBlob'>): Promise<DerivedChange[]> {
  const flagFiles = new Map<string, ChangeType>();
  for (const p of paths) {
    const where = classifyPath(p.path);
    if (where.kind === 'flag') flagFiles.set(`${where.project}/${where.flag}`, p.change);
  }
  const described = await Promise.all(paths.map((p) => describePath(p, flagFiles, reader)));
  return sortUnique(described.flat());
}

const PROJECT_FILE_ACTION: Readonly<Record<ChangeType, AuditAction>> = {
  added: 'project_create',
  deleted: 'project_delete',
  modified: 'change',
};

async function describePath(
  p: ChangedPath,
  flagFiles: ReadonlyMap<string, ChangeType>,
  reader: Pick<DiffReader, 'readBlob'>,
): Promise<DerivedChange[]> {
  const where = classifyPath(p.path);
  const none = { projectSlug: null, flagKey: null, environment: null };
  switch (where.kind) {
    case 'project':
      return [{ ...none, action: PROJECT_FILE_ACTION[p.change], projectSlug: where.project }];
    case 'flag': {
      const at = { ...none, projectSlug: where.project, flagKey: where.flag };
      if (p.change === 'added') return [{ ...at, action: 'flag_create' }];
      if (p.change === 'deleted') return [{ ...at, action: 'flag_delete' }];
      return [{ ...at, action: (await archivedNow(p, reader)) ? 'flag_archive' : 'flag_update' }];
    }
    case 'config': {
      // Creating or deleting a flag writes its configs too; the flag file's entry already says so.
      if (p.change !== 'modified' && flagFiles.get(`${where.project}/${where.flag}`) === p.change) return [];
      return [
        {
          projectSlug: where.project,
          flagKey: where.flag,
          environment: where.environment,
          action: p.change === 'deleted' ? 'change' : 'config_update',
        },
      ];
    }
    case 'kills':
      return killEntries(p, where.project, where.environment, reader);
    case 'segment':
      return [
        {
          ...none,
          action: p.change === 'deleted' ? 'segment_delete' : 'segment_update',
          projectSlug: where.project,
          segmentKey: where.segment,
        },
      ];
    case 'other': {
      const parts = p.path.split('/');
      if (parts[0] !== layout.projectsDir) return [];
      return [{ ...none, action: 'change', projectSlug: parts.length >= 3 ? parts[1] : null }];
    }
  }
}

/** True when a modified flag file went from active to archived. Unreadable versions count as an update. */
async function archivedNow(p: ChangedPath, reader: Pick<DiffReader, 'readBlob'>): Promise<boolean> {
  const [before, after] = await Promise.all([readFlagArchivedAt(p.path, p.oldOid, reader), readFlagArchivedAt(p.path, p.newOid, reader)]);
  return before === null && typeof after === 'string';
}

async function readFlagArchivedAt(
  path: string,
  oid: string | undefined,
  reader: Pick<DiffReader, 'readBlob'>,
): Promise<string | null | undefined> {
  if (!oid) return undefined;
  const { file } = parseRepositoryFile(path, await reader.readBlob(oid));
  return file?.kind === 'flag' ? file.value.archivedAt : undefined;
}

async function killEntries(
  p: ChangedPath,
  project: string,
  environment: EnvironmentName,
  reader: Pick<DiffReader, 'readBlob'>,
): Promise<DerivedChange[]> {
  const read = async (oid: string | undefined) => (oid ? readKills(p.path, await reader.readBlob(oid)) : {});
  const [before, after] = await Promise.all([read(p.oldOid), read(p.newOid)]);
  // An invalid version cannot be compared flag by flag: say that the environment's kills changed.
  if (before === null || after === null) return [{ action: 'change', projectSlug: project, flagKey: null, environment }];
  return killChanges(before, after).map(({ flagKey, action, reason }) => {
    const change: DerivedChange = { action, projectSlug: project, flagKey, environment };
    if (reason) change.reason = reason;
    return change;
  });
}

const ENV_ORDER = new Map<EnvironmentName | null, number>([[null, -1], ...ENVIRONMENTS.map((env, i) => [env, i] as const)]);

/** Project-wide entries first, then by flag and environment: the order a reader scans a pull request in. */
function sortUnique(changes: DerivedChange[]): DerivedChange[] {
  const seen = new Set<string>();
  const unique = changes.filter((c) => {
    const key = JSON.stringify([c.action, c.projectSlug, c.flagKey, c.environment, c.segmentKey ?? null]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const text = (value: string | null) => value ?? '';
  return unique.sort(
    (a, b) =>
      compare(text(a.projectSlug), text(b.projectSlug)) ||
      compare(text(a.flagKey), text(b.flagKey)) ||
      compare(a.segmentKey ?? '', b.segmentKey ?? '') ||
      ENV_ORDER.get(a.environment)! - ENV_ORDER.get(b.environment)! ||
      compare(a.action, b.action),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface KillChange {
  flagKey: string;
  /** `change`: still killed, but the entry was edited (a new reason, a corrected time). */
  action: 'kill' | 'clear_kill' | 'change';
  reason?: string;
}

/** The kill map of one version of a kills.yaml; null when that version is not a valid kills file. */
export function readKills(path: string, text: string): Record<string, KillEntry> | null {
  const { file } = parseRepositoryFile(path, text);
  return file?.kind === 'kills' ? (file.value as KillsFile).kills : null;
}

/** What changed between two kill maps, flag by flag, in key order. An absent file is an empty map. */
export function killChanges(before: Record<string, KillEntry>, after: Record<string, KillEntry>): KillChange[] {
  const out: KillChange[] = [];
  for (const flagKey of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const was = Object.hasOwn(before, flagKey) ? before[flagKey] : undefined;
    const now = Object.hasOwn(after, flagKey) ? after[flagKey] : undefined;
    if (now && !was) out.push(withReason({ flagKey, action: 'kill' }, now));
    else if (was && !now) out.push({ flagKey, action: 'clear_kill' });
    else if (was && now && !sameKill(was, now)) out.push(withReason({ flagKey, action: 'change' }, now));
  }
  return out;
}

function sameKill(a: KillEntry, b: KillEntry): boolean {
  return a.killedAt === b.killedAt && a.killedBy === b.killedBy && a.reason === b.reason;
}

function withReason(change: KillChange, entry: KillEntry): KillChange {
  if (entry.reason) change.reason = entry.reason;
  return change;
}
