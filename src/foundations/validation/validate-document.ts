import { documentValidators } from './ajv-instance.js';
import { ajvErrorsToIssues } from './error-messages.js';
import type { ValidationIssue } from './issue.js';
import { duplicateRuleIdIssues } from './rule-ids.js';
import { scheduleIssues } from './schedule.js';
import type { DocumentSchemaName } from './schema-files.js';

/**
 * Checks one repository document (already parsed from YAML) against its schema, plus what a schema
 * cannot say about a single file (unique rule ids, a schedule in ascending order). No issues means the value has the document's type.
 */
export function validateDocument(schema: DocumentSchemaName, value: unknown, file?: string): ValidationIssue[] {
  const validate = documentValidators[schema];
  const issues = validate(value) ? [] : ajvErrorsToIssues(validate.errors ?? [], value, file);
  if (schema === 'environment-config' && value !== null && typeof value === 'object') {
    issues.push(...duplicateRuleIdIssues((value as { rules?: unknown }).rules, file));
    issues.push(...scheduleIssues((value as { schedule?: unknown }).schedule, file));
  }
  return issues;
}
