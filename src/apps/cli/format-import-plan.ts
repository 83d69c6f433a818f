import { ENVIRONMENTS, type JsonValue } from '@flagops/core';
import { formatFlagChange } from '../../foundations/repository/format-changes.js';
import { type ConfirmItem, type ImportPlan, type KilledFlag, type ProjectPlan, planIsEmpty } from './import-plan.js';

/** A new project lists this many flag names, then counts the rest: a plan of 40,000 names helps nobody. */
const MAX_NAMES = 20;
const MAX_VALUE_LENGTH = 60;

function show(value: JsonValue | undefined): string {
  if (value === undefined) return '(none)';
  const text = JSON.stringify(value);
  return text.length > MAX_VALUE_LENGTH ? `${text.slice(0, MAX_VALUE_LENGTH - 1)}…` : text;
}

/** `prod needs approval for agent, session`; `no approval required` when no environment needs any. */
function approvalWords(value: JsonValue | undefined): string {
  const policy = (value ?? {}) as Record<string, string[] | undefined>;
  const parts = ENVIRONMENTS.filter((env) => (policy[env]?.length ?? 0) > 0).map(
    (env) => `${env} needs approval for ${policy[env]!.join(', ')}`,
  );
  return parts.length > 0 ? parts.join('; ') : 'no approval required';
}

/** `prod: agent may move 10 % of users an hour`; `no budgets` when no environment has one. */
function budgetWords(value: JsonValue | undefined): string {
  const budgets = (value ?? {}) as Record<string, { movedPctPerHour: number; actors: string[] } | undefined>;
  const parts = ENVIRONMENTS.filter((env) => budgets[env] !== undefined).map(
    (env) => `${env}: ${budgets[env]!.actors.join(', ')} may move ${budgets[env]!.movedPctPerHour} % of users an hour`,
  );
  return parts.length > 0 ? parts.join('; ') : 'no budgets';
}

function settingValue(field: string, value: JsonValue | undefined): string {
  if (field === 'requireApproval') return approvalWords(value);
  if (field === 'budgets') return budgetWords(value);
  if (field === 'id' && typeof value === 'string') return value;
  return show(value);
}

/** `checkout-v2 in prod, search-ranking in staging, prod`. */
export function killWords(kills: readonly KilledFlag[]): string {
  const byFlag = new Map<string, string[]>();
  for (const { flag, environment } of kills) byFlag.set(flag, [...(byFlag.get(flag) ?? []), environment]);
  return [...byFlag].map(([flag, envs]) => `${flag} in ${envs.join(', ')}`).join(', ');
}

function names(list: readonly string[]): string {
  const shown = list.slice(0, MAX_NAMES).join(', ');
  return list.length > MAX_NAMES ? `${shown} and ${list.length - MAX_NAMES} more` : shown;
}

const count = (n: number, word: string) => `${n === 0 ? 'no' : n} ${word}${n === 1 ? '' : 's'}`;

/** One line of what needs --yes: `delete flag banner-text`. */
export function describeConfirmItem(item: ConfirmItem, dir: string): string {
  switch (item.type) {
    case 'flag_deleted':
      return `delete flag ${item.flag}`;
    case 'flag_archived':
      return `archive flag ${item.flag}`;
    case 'flag_id_changed':
      return `change the id of flag ${item.flag}: ${item.before} → ${item.after} (API paths naming ${item.before} stop finding it)`;
    case 'segment_deleted':
      return `delete segment ${item.segment}`;
    case 'setting_changed': {
      const words = `change setting ${item.field}: ${settingValue(item.field, item.before)} → ${settingValue(item.field, item.after)}`;
      return item.field === 'id' ? `${words} (API paths and sdk keys naming the old id stop finding the project)` : words;
    }
    case 'file_with_issues':
      return item.deleted
        ? `delete ${item.path}, which has issues (what it holds is not compared)`
        : `replace ${item.path}, which has issues (what it holds is not compared), with the one in ${dir}`;
  }
}

/** A few words for the refusal: `delete flag shop/banner-text`. */
function shortConfirm(slug: string, item: ConfirmItem): string {
  switch (item.type) {
    case 'flag_deleted':
      return `delete flag ${slug}/${item.flag}`;
    case 'flag_archived':
      return `archive flag ${slug}/${item.flag}`;
    case 'flag_id_changed':
      return `change the id of flag ${slug}/${item.flag}`;
    case 'segment_deleted':
      return `delete segment ${slug}/${item.segment}`;
    case 'setting_changed':
      return `change setting ${item.field} of ${slug}`;
    case 'file_with_issues':
      return `${item.deleted ? 'delete' : 'replace'} ${item.path}`;
  }
}

function projectLines(project: ProjectPlan, dir: string): string[] {
  if (project.action === 'create') {
    const settings = Object.entries(project.settings).map(([field, value]) => `${field} ${settingValue(field, value)}`);
    return [
      `project ${project.slug}: new, as in ${dir}`,
      `  ${count(project.flags.length, 'flag')}${project.flags.length > 0 ? `: ${names(project.flags)}` : ''}`,
      `  ${count(project.segments.length, 'segment')}${project.segments.length > 0 ? `: ${names(project.segments)}` : ''}`,
      ...(settings.length > 0 ? [`  settings: ${settings.join('; ')}`] : []),
      ...(project.kills.length > 0 ? [`  killed as in ${dir}: ${killWords(project.kills)}`] : []),
    ];
  }
  const kept = project.kills.length > 0 ? ` (its kills are kept: ${killWords(project.kills)})` : '';
  const lines = [`project ${project.slug}: replaced by the one in ${dir}${kept}`];
  if (project.confirm.length > 0) lines.push('  needs --yes:', ...project.confirm.map((item) => `    ${describeConfirmItem(item, dir)}`));
  if (project.changes.length > 0) lines.push('  changes:', ...project.changes.map((change) => `    ${formatFlagChange(change)}`));
  if (project.confirm.length === 0 && project.changes.length === 0) lines.push('  nothing to change');
  if (project.killsIgnored) lines.push(`  the kills in ${dir} are not applied: an import never lifts, adds or changes a kill`);
  return lines;
}

/** The plan in words, grouped by project, ending with a newline. */
export function formatImportPlan(plan: ImportPlan, dir: string): string {
  const where = !plan.repositoryExists ? 'a new repository' : plan.head === null ? 'no commit yet' : `main at ${plan.head.slice(0, 7)}`;
  const header = `plan for organisation ${plan.org} (${where}):`;
  if (planIsEmpty(plan)) return `${header} nothing to change\n`;
  return `${[header, ...plan.projects.flatMap((project) => projectLines(project, dir))].join('\n')}\n`;
}

/** What needs --yes, in one sentence: `delete flag shop/banner-text and change setting requireApproval of shop`. */
export function confirmSummary(plan: ImportPlan, max = 5): string {
  const all = plan.projects.flatMap((project) => project.confirm.map((item) => shortConfirm(project.slug, item)));
  const shown = all.slice(0, max);
  if (all.length > max) return `${shown.join(', ')} and ${all.length - max} more`;
  return shown.length > 1 ? `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}` : (shown[0] ?? '');
}
