import type { KillEntry, KillsFile } from '@flagops/core';
import { parseRepositoryFile } from '../repository/parse-file.js';

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
