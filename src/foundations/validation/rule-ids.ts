import type { ValidationIssue } from './issue.js';

/**
 * Rule ids are unique within a config, which JSON Schema cannot say. Rules without an id
 * (allowed in request bodies, where the server assigns one) are skipped.
 */
export function duplicateRuleIdIssues(rules: unknown, file?: string): ValidationIssue[] {
  if (!Array.isArray(rules)) return [];
  const issues: ValidationIssue[] = [];
  const firstIndex = new Map<string, number>();
  rules.forEach((rule, index) => {
    const id = (rule as { id?: unknown } | null)?.id;
    if (typeof id !== 'string') return;
    const first = firstIndex.get(id);
    if (first === undefined) {
      firstIndex.set(id, index);
      return;
    }
    const message = `duplicate rule id ${JSON.stringify(id)} (already used by /rules/${first}); rule ids must be unique within a config`;
    issues.push(file === undefined ? { path: `/rules/${index}/id`, message } : { file, path: `/rules/${index}/id`, message });
  });
  return issues;
}
