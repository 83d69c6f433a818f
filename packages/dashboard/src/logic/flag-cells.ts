import { ENVIRONMENTS, type EnvironmentName } from '@flagops/core';
import type { EnvironmentConfigView, FlagView } from '../types.js';

export interface EnvCell {
  state: 'killed' | 'on' | 'off';
  /** KILLED, ON or OFF. */
  label: string;
  /** `25%`, or empty when off (a rollout of a disabled flag serves nothing). */
  rollout: string;
  rules: string;
  title: string;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** One environment of a flag, as a cell of the flags table. */
export function envCell(config: EnvironmentConfigView): EnvCell {
  const rules = config.rules.length === 0 ? '' : plural(config.rules.length, 'rule');
  if (config.killed) {
    const reason = config.killReason ? `: ${config.killReason}` : '';
    return {
      state: 'killed',
      label: 'KILLED',
      rollout: '',
      rules,
      title: `killed by ${config.killedBy ?? '?'} at ${config.killedAt ?? '?'}${reason}; serves valueOff to everyone`,
    };
  }
  if (!config.enabled)
    return { state: 'off', label: 'OFF', rollout: '', rules, title: `disabled; serves valueOff (version ${config.version})` };
  return {
    state: 'on',
    label: 'ON',
    rollout: `${config.rolloutPct}%`,
    rules,
    title: `enabled, rollout ${config.rolloutPct}%, ${plural(config.rules.length, 'rule')} (version ${config.version})`,
  };
}

export interface KilledEntry {
  flag: FlagView;
  env: EnvironmentName;
  config: EnvironmentConfigView;
}

/** Every active kill of a list of flags, prod first: what the red banner lists. */
export function killedEntries(flags: FlagView[]): KilledEntry[] {
  const out: KilledEntry[] = [];
  for (const env of [...ENVIRONMENTS].reverse()) {
    for (const flag of flags) if (flag.environments[env].killed) out.push({ flag, env, config: flag.environments[env] });
  }
  return out;
}

/** Active flags by key, archived ones after them. */
export function sortFlags(flags: FlagView[]): FlagView[] {
  return [...flags].sort(
    (a, b) => Number(a.archivedAt !== null) - Number(b.archivedAt !== null) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
}

/** Flags whose key or name contains the filter text, ignoring case. */
export function filterFlags(flags: FlagView[], text: string): FlagView[] {
  const needle = text.trim().toLowerCase();
  if (needle === '') return flags;
  return flags.filter((f) => f.key.toLowerCase().includes(needle) || f.name.toLowerCase().includes(needle));
}
