import type { EnvironmentState } from '../api/api-types.js';

/**
 * What a config change does not do by itself, said after the change: an agent that raised a rollout
 * should not believe users now get valueOn while a kill or `enabled: false` still decides first (contract §4).
 */
export function configNotes(env: string, state: EnvironmentState): string[] {
  const notes: string[] = [];
  if (state.killed) notes.push(`Note: the flag is KILLED in ${env}; the kill still overrides this config until clear_kill.`);
  else if (!state.enabled) notes.push(`Note: the flag is disabled in ${env}; it serves valueOff until enabled is true.`);
  return notes;
}
