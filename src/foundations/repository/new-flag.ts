import type { EnvironmentConfig, FlagFile, FlagKind, JsonValue } from '@flagops/core';
import { jsonEqual } from './json-equal.js';

/** The value a flag of each kind falls back to when the creator gave none. */
const ZERO: Readonly<Record<FlagKind, JsonValue>> = { boolean: false, string: '', number: 0, json: null };

/** The stored defaultValue: the one sent, else the kind's zero, so an archived flag serves a value of its kind. */
export function initialDefaultValue(kind: FlagKind, defaultValue: JsonValue | undefined): JsonValue {
  return defaultValue === undefined ? ZERO[kind] : defaultValue;
}

/**
 * A new flag's config in every environment: off at 0% with no rules, version 1. A boolean
 * serves true/false; other kinds start with valueOn = valueOff = the default value, so turning a flag on
 * changes nothing until someone chooses the values to serve.
 */
export function initialConfig(kind: FlagKind, defaultValue: JsonValue): EnvironmentConfig {
  const on = kind === 'boolean' ? true : defaultValue;
  const off = kind === 'boolean' ? false : defaultValue;
  return { enabled: false, rolloutPct: 0, valueOn: on, valueOff: off, version: 1, rules: [] };
}

/**
 * Whether a new flag's config serves everyone what the API's new flag serves (its off value, false or the
 * defaultValue) now and later (no schedule): what a push may add where the pusher may not turn the flag on.
 */
export function servesAsCreated(config: EnvironmentConfig, flag: Pick<FlagFile, 'kind' | 'defaultValue'>): boolean {
  const off = initialConfig(flag.kind, initialDefaultValue(flag.kind, flag.defaultValue)).valueOff;
  const servesOff = !config.enabled || (config.rolloutPct === 0 && config.rules.every((rule) => rule.serve === 'off'));
  return servesOff && jsonEqual(config.valueOff, off) && (config.schedule ?? []).length === 0;
}
