import { canonicalJson } from '@flagops/core';
import type { EnvironmentConfigView, Rule } from '../types.js';
import { describeRule, shortValue } from './text.js';

export interface FieldChange {
  field: 'enabled' | 'rolloutPct' | 'valueOn' | 'valueOff';
  before: string;
  after: string;
}

export interface RuleChange {
  kind: 'added' | 'removed' | 'changed' | 'moved';
  id: string;
  before?: string;
  after?: string;
}

export interface PromotionPreview {
  fields: FieldChange[];
  rules: RuleChange[];
  /** Nothing but the version changes (a promotion still commits: every deploy is in the audit trail). */
  unchanged: boolean;
  /** The destination's version after the promotion (the destination's + 1). */
  versionAfter: number;
}

const FIELDS = ['enabled', 'rolloutPct', 'valueOn', 'valueOff'] as const;

function show(field: FieldChange['field'], config: EnvironmentConfigView): string {
  if (field === 'enabled') return config.enabled ? 'on' : 'off';
  if (field === 'rolloutPct') return `${config.rolloutPct}%`;
  return shortValue(config[field]);
}

/** Everything of a rule but its id, for comparing rules that kept their id. */
function content(rule: Rule): string {
  const { id: _id, ...rest } = rule;
  return canonicalJson({ ...rest, conditions: rest.conditions ?? [] });
}

function ruleChanges(from: Rule[], to: Rule[]): RuleChange[] {
  const before = new Map(to.map((r) => [r.id, r]));
  const after = new Map(from.map((r) => [r.id, r]));
  const changes: RuleChange[] = [];
  for (const rule of to) if (!after.has(rule.id)) changes.push({ kind: 'removed', id: rule.id, before: describeRule(rule) });
  const keptInOldOrder = to.filter((r) => after.has(r.id)).map((r) => r.id);
  const keptInNewOrder = from.filter((r) => before.has(r.id)).map((r) => r.id);
  for (const rule of from) {
    const old = before.get(rule.id);
    if (!old) changes.push({ kind: 'added', id: rule.id, after: describeRule(rule) });
    else if (content(old) !== content(rule))
      changes.push({ kind: 'changed', id: rule.id, before: describeRule(old), after: describeRule(rule) });
    else if (keptInOldOrder.indexOf(rule.id) !== keptInNewOrder.indexOf(rule.id)) {
      changes.push({ kind: 'moved', id: rule.id, before: `position ${to.indexOf(old) + 1}`, after: `position ${from.indexOf(rule) + 1}` });
    }
  }
  return changes;
}

/**
 * What promoting `source` into `destination` will change there: the destination's whole config becomes the
 * source's, so the preview compares the two field by field and rule by rule (rules keep
 * their ids across a promotion, so an id names the same rule on both sides).
 */
export function promotionPreview(source: EnvironmentConfigView, destination: EnvironmentConfigView): PromotionPreview {
  const fields: FieldChange[] = [];
  for (const field of FIELDS) {
    if (canonicalJson(source[field]) !== canonicalJson(destination[field]))
      fields.push({ field, before: show(field, destination), after: show(field, source) });
  }
  const rules = ruleChanges(source.rules, destination.rules);
  return { fields, rules, unchanged: fields.length === 0 && rules.length === 0, versionAfter: destination.version + 1 };
}
