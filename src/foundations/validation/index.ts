export type {
  ApiBodies,
  ConfigUpdateBody,
  FlagCreateBody,
  FlagPatchBody,
  KeyCreateBody,
  ProjectCreateBody,
  PromoteBody,
  RolloutPlanBody,
  RuleInput,
  TriggerCreateBody,
} from './api-bodies.js';
export { configModelIssues } from './config-model.js';
export { isDateTime } from './date-time.js';
export { escapePointerSegment, operatorValueMessage } from './error-messages.js';
export { formatIssue, newIssues, type ValidationIssue } from './issue.js';
export { duplicateRuleIdIssues } from './rule-ids.js';
export { guardBoundIssues, pastStepIssues, scheduleIssues, scheduleOrderIssues } from './schedule.js';
export { API_SCHEMAS, type ApiSchemaName, DOCUMENT_SCHEMAS, type DocumentSchemaName } from './schema-files.js';
export { bodyIssues, pointerToField, validateBody } from './validate-body.js';
export { validateDocument } from './validate-document.js';
export { configValueKindIssues, valueKindMessage } from './value-kind.js';
