import { ENVIRONMENTS, type EnvironmentName } from '../../model/index.js';
import type { EnvironmentState, FlagResponse } from '../api/api-types.js';

const show = (value: unknown): string => JSON.stringify(value) ?? 'undefined';

/**
 * One environment in one line. A kill comes first and in capitals: while it lasts the rest of the config
 * is not what users get, and an agent skimming the text must not miss that.
 */
export function environmentLine(env: EnvironmentName, state: EnvironmentState): string {
  const config = [
    state.enabled ? 'enabled' : 'disabled',
    `rollout ${state.rolloutPct}%`,
    `${state.rules.length} rule${state.rules.length === 1 ? '' : 's'}`,
    `valueOn ${show(state.valueOn)}`,
    `valueOff ${show(state.valueOff)}`,
    `version ${state.version}`,
  ].join(', ');
  if (!state.killed) return `${env}: ${config}`;
  const since = [state.killedAt && `since ${state.killedAt}`, state.killedBy && `by ${state.killedBy}`, state.killReason && `reason: ${state.killReason}`]
    .filter(Boolean)
    .join(', ');
  return `${env}: KILLED (serves valueOff ${show(state.valueOff)} to everyone${since ? `; ${since}` : ''}) — config underneath: ${config}`;
}

export function flagHeadline(flag: FlagResponse): string {
  const name = flag.name && flag.name !== flag.key ? ` "${flag.name}"` : '';
  const archived = flag.archivedAt ? `, ARCHIVED at ${flag.archivedAt} (serves defaultValue ${show(flag.defaultValue ?? null)})` : '';
  return `${flag.key}${name} (${flag.kind}, id ${flag.id}${archived})`;
}

/** A flag with every environment, one line each. */
export function flagText(flag: FlagResponse): string {
  return [flagHeadline(flag), ...ENVIRONMENTS.map((env) => `  ${environmentLine(env, flag.environments[env])}`)].join('\n');
}

/** A flag in one line, for lists: the state of each environment in a word or two. */
export function flagSummaryLine(flag: FlagResponse): string {
  const envs = ENVIRONMENTS.map((env) => {
    const s = flag.environments[env];
    if (s.killed) return `${env} KILLED`;
    if (!s.enabled) return `${env} off`;
    return `${env} on ${s.rolloutPct}%${s.rules.length ? ` +${s.rules.length} rule${s.rules.length === 1 ? '' : 's'}` : ''}`;
  });
  return `${flag.key}${flag.archivedAt ? ' (archived)' : ''}: ${envs.join(' · ')}`;
}
