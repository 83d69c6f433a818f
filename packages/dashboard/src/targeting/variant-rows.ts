import { RESERVED_VARIANT_NAMES, VARIANT_NAME_PATTERN, type Variant } from '@flagops/core';
import { inputToValue, valueToInput } from '../logic/value-input.js';
import type { FlagKind } from '../types.js';

/** One variant as typed in the editor, before parsing. */
export interface VariantRow {
  name: string;
  value: string;
  weight: string;
}

export interface CheckedVariants {
  /** The variants to send; empty when there are none (the config serves valueOn). */
  variants: Variant[];
  /** Per row, what is wrong with it; and `total` for the sum. Empty when the variants can be saved. */
  issues: string[];
  /** The sum of the weights that parse, for the bar and the total shown. */
  total: number;
}

export function rowsOf(kind: FlagKind, variants: readonly Variant[] | undefined): VariantRow[] {
  return (variants ?? []).map((v) => ({ name: v.name, value: valueToInput(kind, v.value), weight: String(v.weight) }));
}

/** The same rules as the server: names, values of the flag's kind, weights with two decimals adding up to 100. */
export function checkVariantRows(kind: FlagKind, rows: readonly VariantRow[]): CheckedVariants {
  const issues: string[] = [];
  const variants: Variant[] = [];
  const seen = new Set<string>();
  let hundredths = 0;
  rows.forEach((row, i) => {
    const label = `Variant ${i + 1}${row.name ? ` (${row.name})` : ''}`;
    const name = row.name.trim();
    if (!VARIANT_NAME_PATTERN.test(name)) issues.push(`${label}: the name must be a lower-case letter, then letters, digits, _ or -`);
    else if (RESERVED_VARIANT_NAMES.includes(name)) issues.push(`${label}: on, off and default are taken by the fixed variations`);
    else if (seen.has(name)) issues.push(`${label}: the name is used twice`);
    seen.add(name);
    const value = inputToValue(kind, row.value);
    if (!value.ok) issues.push(`${label}: the value ${value.message}`);
    const weight = Number(row.weight.trim());
    if (row.weight.trim() === '' || !Number.isFinite(weight) || weight < 0 || weight > 100) {
      issues.push(`${label}: the weight must be a number from 0 to 100`);
    } else if (Math.abs(weight * 100 - Math.round(weight * 100)) > 1e-6) {
      issues.push(`${label}: the weight may have at most two decimals`);
    } else hundredths += Math.round(weight * 100);
    if (value.ok) variants.push({ name, value: value.value, weight });
  });
  if (rows.length > 32) issues.push('At most 32 variants.');
  if (rows.length > 0 && hundredths !== 10000) issues.push(`The weights add up to ${hundredths / 100}; they must add up to exactly 100.`);
  return { variants: issues.length === 0 ? variants : [], issues, total: hundredths / 100 };
}

/** The bar's segments: each variant's share of 100, from left to right. */
export function weightSegments(rows: readonly VariantRow[]): Array<{ name: string; from: number; width: number }> {
  let from = 0;
  return rows.map((row) => {
    const weight = Number(row.weight);
    const width = Number.isFinite(weight) && weight > 0 ? Math.min(weight, Math.max(0, 100 - from)) : 0;
    const segment = { name: row.name || '?', from, width };
    from += width;
    return segment;
  });
}
