import { ENVIRONMENTS, type EnvironmentName } from '@flagops/core';
import { escapedControls } from '../../../foundations/validation/one-line.js';
import type { EnvironmentState, FlagResponse, InvalidFileResponse } from '../api-types.js';

const show = (value: unknown): string => JSON.stringify(value) ?? 'undefined';

/**
 * One environment in one line. A kill comes first and in capitals: while it lasts the rest of the config
 * is not what users get, and an agent skimming the text must not miss that. Free text (the kill's reason, a
 * guard's query) is shown with its line breaks escaped, so it cannot show a line of its own.
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
  const steps = state.schedule ?? [];
  const next = steps[0];
  const scheduled = next
    ? `; next scheduled step ${next.at}: ${[
        next.set.enabled === undefined ? '' : next.set.enabled ? 'enable' : 'disable',
        next.set.rolloutPct === undefined ? '' : `rollout ${next.set.rolloutPct}%`,
      ]
        .filter(Boolean)
        .join(', ')}${next.guard ? ` (${guardWords(next.guard)})` : ''}${steps.length > 1 ? ` (${steps.length - 1} more after it)` : ''}`
    : '';
  if (!state.killed) return escapedControls(`${env}: ${config}${scheduled}`);
  const since = [
    state.killedAt && `since ${state.killedAt}`,
    state.killedBy && `by ${state.killedBy}`,
    state.killReason && `reason: ${state.killReason}`,
  ]
    .filter(Boolean)
    .join(', ');
  return escapedControls(
    `${env}: KILLED (serves valueOff ${show(state.valueOff)} to everyone${since ? `; ${since}` : ''}) — config underneath: ${config}${scheduled}`,
  );
}

/** `guarded: <query> must stay ≤ 0.05, checked every 60 s`. */
export function guardWords(guard: NonNullable<NonNullable<EnvironmentState['schedule']>[number]['guard']>): string {
  const bounds = [guard.min === undefined ? '' : `≥ ${guard.min}`, guard.max === undefined ? '' : `≤ ${guard.max}`].filter(Boolean);
  return `guarded: ${guard.query} must stay ${bounds.join(' and ')}, checked every ${guard.intervalSeconds ?? 60} s`;
}

/**
 * What a config change does not do by itself, said after the change: an agent that raised a rollout should not
 * believe users now get valueOn while a kill, the archive or `enabled: false` still decides first, in that order
 * (docs/evaluation.md).
 */
export function configNotes(flag: FlagResponse, env: EnvironmentName): string[] {
  const state = flag.environments[env];
  if (flag.archivedAt) {
    const served = `its defaultValue ${show(flag.defaultValue ?? null)} (reason "archived")`;
    return [
      `Note: ${flag.key} is ARCHIVED (since ${flag.archivedAt}): this config is stored but not served. ${env} serves ${
        state.killed ? `valueOff while the kill lasts (a kill comes first), then ${served}` : served
      } until the flag is restored (a human sets archivedAt back to null in its flag file in the flags repository).`,
    ];
  }
  if (state.killed) return [`Note: the flag is KILLED in ${env}; the kill still overrides this config until clear_kill.`];
  if (!state.enabled) return [`Note: the flag is disabled in ${env}; it serves valueOff until enabled is true.`];
  return [];
}

export function flagHeadline(flag: FlagResponse): string {
  const name = flag.name && flag.name !== flag.key ? ` "${flag.name}"` : '';
  const archived = flag.archivedAt ? `, ARCHIVED at ${flag.archivedAt} (serves defaultValue ${show(flag.defaultValue ?? null)})` : '';
  return escapedControls(`${flag.key}${name} (${flag.kind}, id ${flag.id}${archived})`);
}

const where = (entry: InvalidFileResponse) => `${entry.file}${entry.line === null ? '' : `:${entry.line}`}`;

/**
 * While an invalid file on main holds the flag back: what serves (its last valid state, shown below), what
 * is refused (every change but kills) and which file to fix, so an agent neither retries nor misreads the state.
 */
export function heldBackText(flag: FlagResponse): string | undefined {
  if (!flag.invalidFiles?.length) return undefined;
  const files = flag.invalidFiles.map((entry) => escapedControls(`    ${where(entry)}: ${entry.message}`));
  return [
    '  HELD BACK: an invalid file on main keeps this flag at its last valid state (what is shown and served below).',
    '  Changes other than kills are refused (invalid_in_repository) until a human fixes or reverts:',
    ...files,
  ].join('\n');
}

/** `lifecycle: experiment flag, owner team-checkout, expires 2027-03-31`, or that it has none. */
export function lifecycleLine(flag: FlagResponse): string {
  const lifecycle = flag.lifecycle;
  if (!lifecycle) return '  lifecycle: none set (type, owner and expiry unknown)';
  const parts = [
    `${lifecycle.type} flag`,
    lifecycle.owner ? `owner ${lifecycle.owner}` : 'no owner',
    lifecycle.expiresAt ? `expires ${lifecycle.expiresAt}` : 'no expiry',
  ];
  return escapedControls(`  lifecycle: ${parts.join(', ')}`);
}

/** A flag with its lifecycle and every environment, one line each. */
export function flagText(flag: FlagResponse): string {
  const held = heldBackText(flag);
  return [
    flagHeadline(flag),
    ...(held ? [held] : []),
    lifecycleLine(flag),
    ...ENVIRONMENTS.map((env) => `  ${environmentLine(env, flag.environments[env])}`),
  ].join('\n');
}

/** A flag in one line, for lists: the state of each environment in a word or two. */
export function flagSummaryLine(flag: FlagResponse): string {
  const envs = ENVIRONMENTS.map((env) => {
    const s = flag.environments[env];
    if (s.killed) return `${env} KILLED`;
    if (!s.enabled) return `${env} off`;
    return `${env} on ${s.rolloutPct}%${s.rules.length ? ` +${s.rules.length} rule${s.rules.length === 1 ? '' : 's'}` : ''}`;
  });
  const held = flag.invalidFiles?.length ? ` — HELD BACK by invalid ${[...new Set(flag.invalidFiles.map(where))].join(', ')}` : '';
  return escapedControls(`${flag.key}${flag.archivedAt ? ' (archived)' : ''}: ${envs.join(' · ')}${held}`);
}
