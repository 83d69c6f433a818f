import { type EnvironmentConfig, type FlagKind, RESERVED_VARIANT_NAMES, type Rule, type Variant } from '@flagops/core';
import type { ValidationIssue } from './issue.js';
import { configValueKindIssues, valueKindMessage } from './value-kind.js';

// The checks of one environment config that a schema cannot state: values of the flag's kind, variant weights
// that add up, names that are unique, rules that serve a variant the config has. They need only the config and
// its flag's kind, so an invalid one holds back only its own flag.

/** Whether a weight has at most two decimals (as a percentage: whole hundredths of a percent). */
function hasTwoDecimalsAtMost(weight: number): boolean {
  return Math.abs(weight * 100 - Math.round(weight * 100)) < 1e-6;
}

function variantIssues(kind: FlagKind, variants: readonly Variant[], issue: (path: string, message: string) => void): void {
  const seen = new Map<string, number>();
  let total = 0;
  variants.forEach((variant, i) => {
    const at = `/variants/${i}`;
    const first = seen.get(variant.name);
    if (first !== undefined) issue(`${at}/name`, `"${variant.name}" is already the name of variant ${first}; variant names must be unique`);
    else seen.set(variant.name, i);
    if (RESERVED_VARIANT_NAMES.includes(variant.name))
      issue(`${at}/name`, 'must not be on, off or default, which are the fixed variations');
    const kindMessage = valueKindMessage(kind, variant.value);
    if (kindMessage) issue(`${at}/value`, kindMessage);
    if (!hasTwoDecimalsAtMost(variant.weight)) issue(`${at}/weight`, `must have at most two decimals (found ${variant.weight})`);
    // In millionths, so that the sum is exact for any weight the decimals check lets through, and close for the others.
    total += Math.round(variant.weight * 1e6);
  });
  if (total !== 100e6) {
    const shown = variants.map((v) => `${v.name} ${v.weight}`).join(' + ');
    issue('/variants', `weights must add up to exactly 100 (${shown} = ${total / 1e6})`);
  }
}

function serveIssues(
  rules: readonly Rule[],
  variants: readonly Variant[] | undefined,
  issue: (path: string, message: string) => void,
): void {
  rules.forEach((rule, i) => {
    // A rule that is not an object, or a serve that is not a string, is the schema's to report.
    if (rule === null || typeof rule !== 'object' || typeof rule.serve !== 'string') return;
    if (rule.serve === 'on' || rule.serve === 'off') return;
    if (!variants?.some((v) => v.name === rule.serve)) {
      const known = variants?.length ? `; its variants are ${variants.map((v) => v.name).join(', ')}` : '; it has no variants';
      issue(`/rules/${i}/serve`, `serves variant "${rule.serve}", which this config does not have${known}`);
    }
  });
}

function isVariantShaped(value: unknown): value is Variant {
  const v = value as Partial<Variant> | null;
  return v !== null && typeof v === 'object' && typeof v.name === 'string' && typeof v.weight === 'number' && Number.isFinite(v.weight);
}

/**
 * What a config says wrong of itself given its flag's kind. Fields absent from `config` are skipped, so a
 * partial config (a request body) is checked for what it carries; `variants` null counts as none.
 */
export function configModelIssues(
  kind: FlagKind,
  config: Partial<Pick<EnvironmentConfig, 'valueOn' | 'valueOff' | 'rules'>> & { variants?: Variant[] | null },
  file?: string,
): ValidationIssue[] {
  const issues = configValueKindIssues(kind, config, file);
  const issue = (path: string, message: string) => issues.push(file === undefined ? { path, message } : { file, path, message });
  // Checked only in the shape the schema allows; anything else is the schema's to report.
  const variants = Array.isArray(config.variants) && config.variants.every(isVariantShaped) ? config.variants : undefined;
  if (variants && variants.length > 0) variantIssues(kind, variants, issue);
  if (Array.isArray(config.rules)) serveIssues(config.rules, variants, issue);
  return issues;
}
