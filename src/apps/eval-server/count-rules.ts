import type { EnvironmentView } from './environment-view.js';

export interface CountRules {
  /** Whether the key's environment has this flag. */
  hasFlag(flagKey: string): boolean;
  /** The names of the flag's variants in this environment. */
  variantsOf(flagKey: string): readonly string[];
  /** Whether the flag is archived in this environment: only an archived flag serves `default`. */
  archived(flagKey: string): boolean;
  /** Epoch milliseconds. */
  now: number;
  /** The largest count an entry may carry (default MAX_ENTRY_COUNT). */
  maxCount?: number;
}

/** What a report of counts for one environment's view is checked against: its flags and their variants. */
export function viewCountRules(view: Pick<EnvironmentView, 'compiled' | 'flags'>, now: number): CountRules {
  return {
    hasFlag: (key) => view.compiled.has(key),
    variantsOf: (key) => (Object.hasOwn(view.flags, key) ? (view.flags[key].variants ?? []).map((v) => v.name) : []),
    archived: (key) => Object.hasOwn(view.flags, key) && view.flags[key].archived,
    now,
  };
}

/**
 * Whether the environment has the flag and it can serve the variation now (docs/evaluation.md): an archived flag
 * `default` (or `off`, killed); otherwise `on` and `off` without variants, `off` and its variants with them.
 */
export function servesVariation(rules: CountRules, flagKey: string, variation: string): boolean {
  if (!rules.hasFlag(flagKey)) return false;
  if (variation === 'off') return true;
  if (rules.archived(flagKey)) return variation === 'default';
  const variants = rules.variantsOf(flagKey);
  return variants.length === 0 ? variation === 'on' : variants.includes(variation);
}
