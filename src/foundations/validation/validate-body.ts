import { InvalidInputError, quotedPrefix } from '../errors/kinds.js';
import { apiValidators } from './ajv-instance.js';
import type { ApiBodies } from './api-bodies.js';
import { ajvErrorsToIssues } from './error-messages.js';
import type { ValidationIssue } from './issue.js';
import { nonFinitePointers } from './json-value.js';
import { duplicateRuleIdIssues } from './rule-ids.js';
import { guardBoundIssues, scheduleIssues } from './schedule.js';
import type { ApiSchemaName } from './schema-files.js';

/** `/rules/0/conditions/1/value` → `rules[0].conditions[1].value`: how API users write a field. */
export function pointerToField(pointer: string): string {
  let field = '';
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (/^\d+$/.test(segment)) field += `[${segment}]`;
    else field += field === '' ? segment : `.${segment}`;
  }
  return field;
}

/** The issues of a request body, empty when it is valid. */
export function bodyIssues(schema: ApiSchemaName, body: unknown): ValidationIssue[] {
  const validate = apiValidators[schema];
  const issues = validate(body) ? [] : ajvErrorsToIssues(validate.errors ?? [], body);
  if (schema === 'config-update' && body !== null && typeof body === 'object') {
    issues.push(...duplicateRuleIdIssues((body as { rules?: unknown }).rules));
    issues.push(...scheduleIssues((body as { schedule?: unknown }).schedule));
  }
  if (schema === 'rollout-plan' && body !== null && typeof body === 'object')
    issues.push(...guardBoundIssues((body as { guard?: unknown }).guard, '/guard'));
  // JSON.parse reads 1e309 as Infinity, which no schema type catches where any value is allowed (flag values).
  for (const path of nonFinitePointers(body)) {
    if (!issues.some((issue) => issue.path === path))
      issues.push({ path, message: 'must hold finite numbers only (JSON has no Infinity: 1e309 is too large)' });
  }
  return issues;
}

const MAX_LISTED = 5;

/**
 * Validates a control-plane request body with the same compiled schemas as the repository files and returns
 * it typed. Throws InvalidInputError (400 invalid_input) whose message names the offending field(s) and whose
 * `field` is the first one.
 */
export function validateBody<N extends ApiSchemaName>(schema: N, body: unknown): ApiBodies[N] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidInputError('the body must be a JSON object');
  }
  const issues = bodyIssues(schema, body);
  if (issues.length === 0) return body as ApiBodies[N];
  const parts = issues.slice(0, MAX_LISTED).map((issue) => {
    const field = quotedPrefix(pointerToField(issue.path ?? ''));
    return field === '' ? issue.message : `${field}: ${issue.message}`;
  });
  if (issues.length > MAX_LISTED) parts.push(`and ${issues.length - MAX_LISTED} more`);
  const first = pointerToField(issues[0].path ?? '');
  throw new InvalidInputError(parts.join('; '), first === '' ? undefined : first);
}
