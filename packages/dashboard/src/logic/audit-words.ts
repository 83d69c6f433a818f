import type { AuditEntry } from '../types.js';

/** Each action as people say it; an action this page does not know yet is shown as recorded. */
const ACTION_WORDS: Readonly<Record<string, string>> = {
  kill: 'Killed',
  clear_kill: 'Kill cleared',
  promote: 'Promoted',
  config_update: 'Config changed',
  flag_create: 'Flag created',
  flag_update: 'Flag details changed',
  flag_archive: 'Flag archived',
  flag_delete: 'Flag deleted',
  project_create: 'Project created',
  project_delete: 'Project deleted',
  segment_update: 'Segment saved',
  segment_delete: 'Segment deleted',
  import: 'Imported',
  change: 'Changed in git',
  scheduled_change: 'Scheduled step applied',
  scheduled_change_skipped: 'Scheduled step skipped',
  guard_failed: 'Guard failed: rollout stopped',
};

export function actionWords(action: string): string {
  return ACTION_WORDS[action] ?? action.replace(/_/g, ' ');
}

/** How the actor acted, beside their name: "dashboard", "agent key", "git push". */
export function actorVia(actor: AuditEntry['actor']): string {
  switch (actor.type) {
    case 'session':
      return 'dashboard';
    case 'git':
      return 'git push';
    case 'scheduler':
      return 'schedule';
    case 'trigger':
      return 'trigger';
    default:
      return `${actor.type} key`;
  }
}

/** The actor's name first: a key without a name is "an agent key", the scheduler "the scheduler". */
export function actorName(actor: AuditEntry['actor']): string {
  if (actor.type === 'scheduler') return 'the scheduler';
  if (actor.name && actor.name !== actor.keyPrefix) return actor.name;
  if (actor.keyPrefix) return `an ${actor.type} key`;
  return actor.name ?? 'unknown';
}

/** The first 8 characters of a commit id, as git shows it short. */
export function shortCommit(id: string): string {
  return /^[0-9a-f]{40,64}$/.test(id) ? id.slice(0, 8) : id;
}
