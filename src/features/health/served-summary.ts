import type { EnvironmentConfig, JsonValue } from '@flagops/core';

/**
 * What an environment serves, as far as stale-flag detection cares: one value to every context, or more
 * than one (or not known to be one). `key` compares two summaries: equal keys, the same one value.
 */
export type ServedSummary = { kind: 'one'; value: JsonValue; key: string } | { kind: 'mixed'; key: 'mixed' };

const MIXED: ServedSummary = { kind: 'mixed', key: 'mixed' };

/** JSON with object keys sorted, so that equal values give equal text. */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
}

export function oneValue(value: JsonValue): ServedSummary {
  return { kind: 'one', value, key: `v:${canonicalJson(value)}` };
}

/**
 * Whether a config serves one value to everyone. Killed, or disabled with no schedule: `valueOff`. Enabled: every value a
 * step of evaluation could serve is gathered (each rule's, whether or not its conditions can match, and
 * the rollout's); one distinct value is "one value to everyone". Prerequisites may fail and serve
 * `valueOff`, so they count it too. A pending schedule is a plan to change what is served, so such a
 * config is never summed up as one value.
 */
export function summarizeServed(config: EnvironmentConfig, killed: boolean): ServedSummary {
  // Steps falling due while killed are skipped, so a kill's one value holds whatever the schedule says;
  // a disabled config's steps may turn it on.
  if (killed) return oneValue(config.valueOff);
  if ((config.schedule?.length ?? 0) > 0) return MIXED;
  if (!config.enabled) return oneValue(config.valueOff);
  const values = new Map<string, JsonValue>();
  const add = (value: JsonValue) => values.set(canonicalJson(value), value);
  const onValues = () => {
    const variants = config.variants?.filter((v) => v.weight > 0) ?? [];
    if (variants.length === 0) add(config.valueOn);
    else for (const v of variants) add(v.value);
  };
  if ((config.prerequisites?.length ?? 0) > 0) add(config.valueOff);
  for (const rule of config.rules) {
    if (rule.serve === 'on') onValues();
    else if (rule.serve === 'off') add(config.valueOff);
    else {
      const variant = config.variants?.find((v) => v.name === rule.serve);
      // A rule naming a variant that is gone serves nothing known: not one value.
      if (!variant) return MIXED;
      add(variant.value);
    }
  }
  if (config.rolloutPct >= 100) onValues();
  else if (config.rolloutPct <= 0) add(config.valueOff);
  else {
    onValues();
    add(config.valueOff);
  }
  if (values.size !== 1) return MIXED;
  return oneValue([...values.values()][0]);
}
