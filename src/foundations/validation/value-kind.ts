import type { FlagKind, JsonValue } from '@flagops/core';
import type { ValidationIssue } from './issue.js';

/**
 * Why `value` cannot be served by a flag of `kind`, or undefined when it can. A json flag serves any JSON
 * value; the others serve exactly their type (null included only for json).
 */
export function valueKindMessage(kind: FlagKind, value: JsonValue | undefined): string | undefined {
  switch (kind) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : "must be true or false, as the flag's kind is boolean";
    case 'string':
      return typeof value === 'string' ? undefined : "must be a string, as the flag's kind is string";
    case 'number':
      return typeof value === 'number' ? undefined : "must be a number, as the flag's kind is number";
    case 'json':
      return undefined;
  }
}

/**
 * valueOn and valueOff of an environment config checked against its flag's kind: a cross-file check in the
 * repository, and a check the control plane runs on a config update (fields absent from `config` are skipped).
 */
export function configValueKindIssues(
  kind: FlagKind,
  config: { valueOn?: JsonValue; valueOff?: JsonValue },
  file?: string,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const field of ['valueOn', 'valueOff'] as const) {
    if (!(field in config)) continue;
    const message = valueKindMessage(kind, config[field]);
    if (message) issues.push(file === undefined ? { path: `/${field}`, message } : { file, path: `/${field}`, message });
  }
  return issues;
}
