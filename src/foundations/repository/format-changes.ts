import {
  type EnvironmentBudget,
  type FlagLifecycle,
  GUARD_DEFAULT_INTERVAL_SECONDS,
  type JsonValue,
  type ScheduleGuard,
  type ScheduleStep,
  type Variant,
} from '@flagops/core';
import type { ChangeItem, FlagChange } from './diff-states.js';

const MAX_VALUE_LENGTH = 40;

function show(value: JsonValue | undefined): string {
  if (value === undefined) return '(none)';
  const text = JSON.stringify(value);
  return text.length > MAX_VALUE_LENGTH ? `${text.slice(0, MAX_VALUE_LENGTH - 1)}…` : text;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `variants blue 50 → 30, green 50 → 70`: per variant, what changed, in the order of the new list. */
function variantWords(before: readonly Variant[] | undefined, after: readonly Variant[] | undefined): string {
  if (!after) return 'variants removed (valueOn is served again)';
  if (!before) return `variants added: ${after.map((v) => `${v.name} ${v.weight}`).join(', ')}`;
  const parts: string[] = [];
  const old = new Map(before.map((v) => [v.name, v]));
  for (const v of after) {
    const was = old.get(v.name);
    if (!was) {
      parts.push(`${v.name} added at ${v.weight}`);
      continue;
    }
    if (was.weight !== v.weight) parts.push(`${v.name} ${was.weight} → ${v.weight}`);
    if (JSON.stringify(was.value) !== JSON.stringify(v.value)) parts.push(`${v.name} value ${show(was.value)} → ${show(v.value)}`);
  }
  for (const v of before) if (!after.some((n) => n.name === v.name)) parts.push(`${v.name} removed`);
  return parts.length > 0 ? `variants ${parts.join(', ')}` : 'variants reordered or described anew';
}

const steps = (count: number) => `${count} step${count === 1 ? '' : 's'}`;

/** `2026-11-24 09:00Z`, with seconds only when they are not zero. */
export function shortTime(at: string): string {
  const iso = new Date(at).toISOString();
  const seconds = iso.slice(17, 19) === '00' && iso.slice(19, 23) === '.000' ? '' : iso.slice(16, 19);
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}${seconds}Z`;
}

/** What a step sets, in words: `rollout 25 %`, `enabled, rollout 100 %`. */
export function describeStepSet(set: ScheduleStep['set']): string {
  const parts: string[] = [];
  if (set.enabled !== undefined) parts.push(set.enabled ? 'enabled' : 'disabled');
  if (set.rolloutPct !== undefined) parts.push(`rollout ${set.rolloutPct} %`);
  return parts.join(', ');
}

/** `guard sum(rate(errors[5m])) ≤ 0.05 every 60 s`, `guard up ≥ 1, ≤ 3 every 10 s`. */
export function describeGuard(guard: ScheduleGuard): string {
  const bounds = [guard.min === undefined ? '' : `≥ ${guard.min}`, guard.max === undefined ? '' : `≤ ${guard.max}`].filter(Boolean);
  return `guard ${guard.query} ${bounds.join(', ')} every ${guard.intervalSeconds ?? GUARD_DEFAULT_INTERVAL_SECONDS} s`;
}

function describeSchedule(item: Extract<ChangeItem, { type: 'schedule_changed' }>): string {
  if (item.next === null) return `schedule: ${steps(item.removed)} removed, none left`;
  const counts = [item.added > 0 ? `${steps(item.added)} added` : '', item.removed > 0 ? `${steps(item.removed)} removed` : ''];
  const guards = item.guards ? `; ${item.guards.map(describeGuard).join('; ')}` : '';
  return `schedule: ${counts.filter(Boolean).join(', ')}; next ${shortTime(item.next.at)} → ${describeStepSet(item.next.set)}${guards}`;
}

/** `agent, session 10 %/h`, or `none`. */
/** The actor types whose changes need approval: `admin, agent`, or `none`. */
function approvalWords(actors: readonly string[] | undefined): string {
  return actors?.length ? actors.join(', ') : 'none';
}

function budgetWords(budget: EnvironmentBudget | undefined): string {
  return budget ? `${budget.actors.join(', ')} ${budget.movedPctPerHour} %/h` : 'none';
}

/** `type experiment, owner team-checkout, expires 2027-03-31`: a whole lifecycle, for one that came or went. */
function lifecycleWords(lifecycle: FlagLifecycle): string {
  const parts = [`type ${lifecycle.type}`];
  if (lifecycle.owner !== undefined) parts.push(`owner ${lifecycle.owner}`);
  if (lifecycle.expiresAt !== undefined) parts.push(`expires ${lifecycle.expiresAt}`);
  return parts.join(', ');
}

/** `type release → experiment, owner set to team-checkout, expires 2027-03-31`: what changed, field by field. */
function lifecycleChangeWords(before: FlagLifecycle | undefined, after: FlagLifecycle | undefined): string {
  if (!after) return before ? `lifecycle removed (was ${lifecycleWords(before)})` : 'lifecycle removed';
  if (!before) return `lifecycle set: ${lifecycleWords(after)}`;
  const parts: string[] = [];
  if (before.type !== after.type) parts.push(`type ${before.type} → ${after.type}`);
  if (before.owner !== after.owner) {
    if (after.owner === undefined) parts.push(`owner ${before.owner} removed`);
    else parts.push(before.owner === undefined ? `owner set to ${after.owner}` : `owner ${before.owner} → ${after.owner}`);
  }
  if (before.expiresAt !== after.expiresAt) {
    if (after.expiresAt === undefined) parts.push(`expiry ${before.expiresAt} removed`);
    else parts.push(before.expiresAt === undefined ? `expires ${after.expiresAt}` : `expiry ${before.expiresAt} → ${after.expiresAt}`);
  }
  return parts.join(', ');
}

/** One change in words, as `flagops diff` prints it: `rolloutPct 10 → 50`, `rule beta-users added`. */
export function describeChange(item: ChangeItem): string {
  switch (item.type) {
    case 'project_added':
      return 'project added';
    case 'project_removed':
      return `project removed with its ${item.flagCount} flag(s)`;
    case 'flag_added':
      return `flag added (${item.kind})`;
    case 'flag_deleted':
      return 'flag deleted';
    case 'flag_archived':
      return 'archived';
    case 'flag_unarchived':
      return 'unarchived';
    case 'field_changed':
      if (item.field === 'enabled') return item.after ? 'enabled' : 'disabled';
      if (item.field === 'rolloutPct') return `rolloutPct ${item.before ?? 0} → ${item.after}`;
      if (item.field === 'description') return 'description changed';
      return `${item.field} ${show(item.before)} → ${show(item.after)}`;
    case 'lifecycle_changed':
      return lifecycleChangeWords(item.before, item.after);
    case 'rule_added':
      return `rule ${item.ruleId} added`;
    case 'rule_removed':
      return `rule ${item.ruleId} removed`;
    case 'rule_changed': {
      const parts = item.fields.map((f) => {
        if (f.field === 'conditions' || f.field === 'description') return `${f.field} changed`;
        return `${f.field} ${f.before ?? '(none)'} → ${f.after ?? '(none)'}`;
      });
      return `rule ${item.ruleId} changed (${parts.join(', ')})`;
    }
    case 'rules_reordered':
      return 'rules reordered';
    case 'schedule_changed':
      return describeSchedule(item);
    case 'killed':
      return `killed by ${item.killedBy}${item.reason ? ` (${item.reason})` : ''}`;
    case 'unkilled':
      return 'kill cleared';
    case 'variants_changed':
      return variantWords(item.before, item.after);
    case 'prerequisite_added':
      return `prerequisite ${item.flag} = ${item.variation} added`;
    case 'prerequisite_removed':
      return `prerequisite ${item.flag} = ${item.variation} removed`;
    case 'segment_added':
      return `segment ${item.segmentKey} added (${plural(item.userIds, 'user id')}, ${plural(item.conditions, 'condition')})`;
    case 'segment_removed':
      return `segment ${item.segmentKey} removed`;
    case 'approval_changed':
      return `approval needed in ${item.environment}: ${approvalWords(item.before)} → ${approvalWords(item.after)}`;
    case 'budget_changed':
      return `budget in ${item.environment}: ${budgetWords(item.before)} → ${budgetWords(item.after)}`;
    case 'segment_changed': {
      const parts: string[] = [];
      if (item.userIdsAdded > 0) parts.push(`${plural(item.userIdsAdded, 'user id')} added`);
      if (item.userIdsRemoved > 0) parts.push(`${plural(item.userIdsRemoved, 'user id')} removed`);
      if (item.conditionsChanged) parts.push('conditions changed');
      for (const name of item.fields) parts.push(`${name} changed`);
      return `segment ${item.segmentKey}: ${parts.join(', ')}`;
    }
  }
}

/** `shop/checkout-v2 prod: rolloutPct 10 → 50; rule beta-users added; killed by deploy-bot` */
export function formatFlagChange(change: FlagChange): string {
  const subject = `${change.project}${change.flag === null ? '' : `/${change.flag}`}${change.environment === null ? '' : ` ${change.environment}`}`;
  return `${subject}: ${change.changes.map(describeChange).join('; ')}`;
}

/** One line per change; a single line saying so when there is none. */
export function formatChanges(changes: readonly FlagChange[]): string {
  return changes.length === 0 ? 'no flag changes' : changes.map(formatFlagChange).join('\n');
}
