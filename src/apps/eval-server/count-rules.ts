import type { EnvironmentView } from './environment-view.js';

/** The fixed variations the evaluation core serves (docs/evaluation.md); besides these, only a flag's variants. */
export const VARIATIONS: ReadonlySet<string> = new Set(['on', 'off', 'default']);

export interface CountRules {
  /** Whether the key's environment has this flag. */
  hasFlag(flagKey: string): boolean;
  /** The names of the flag's variants in this environment; anything else but on, off and default cannot come from an SDK. */
  variantsOf?(flagKey: string): readonly string[];
  /** Whether the flag is archived in this environment: only an archived flag serves `default`. */
  archived?(flagKey: string): boolean;
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

/** Whether the environment has the flag and it can serve the variation (on, off, default or one of its variants). */
export function servesVariation(rules: CountRules, flagKey: string, variation: string): boolean {
  return rules.hasFlag(flagKey) && (VARIATIONS.has(variation) || (rules.variantsOf?.(flagKey) ?? []).includes(variation));
}
