import { ENVIRONMENTS } from '@flagops/core';

/**
 * What each answer the tools read must look like before they read it: a proxy or another server in front of
 * FLAGOPS_URL can answer 200 with something else (`{}`), and a tool reading `environments.prod` of that would
 * fail as if flagops-mcp had a bug. Only the fields the tools rely on are checked; api-types.ts has the rest.
 */
export interface AnswerShape {
  /** What the answer should be, in words: "a flag". */
  what: string;
  fits(body: unknown): boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const isFlag = (body: unknown): boolean =>
  isObject(body) &&
  typeof body.id === 'string' &&
  typeof body.key === 'string' &&
  isObject(body.environments) &&
  ENVIRONMENTS.every((env) => isObject((body.environments as Record<string, unknown>)[env]));

const isSegment = (body: unknown): boolean =>
  isObject(body) &&
  typeof body.key === 'string' &&
  Array.isArray(body.userIds) &&
  Array.isArray(body.conditions) &&
  Array.isArray(body.usedBy);

const listOf = (field: string, item: (value: unknown) => boolean) => (body: unknown) =>
  isObject(body) && Array.isArray(body[field]) && body[field].every(item);

export const FLAG: AnswerShape = { what: 'a flag', fits: isFlag };
export const SEGMENT: AnswerShape = { what: 'a segment', fits: isSegment };
export const FLAG_LIST: AnswerShape = { what: 'a list of flags', fits: listOf('flags', isFlag) };
export const SEGMENT_LIST: AnswerShape = { what: 'a list of segments', fits: listOf('segments', isSegment) };
export const PROJECT_LIST: AnswerShape = {
  what: 'a list of projects',
  fits: listOf('projects', (p) => isObject(p) && typeof p.id === 'string' && typeof p.slug === 'string'),
};
export const PROPOSAL_LIST: AnswerShape = {
  what: 'a list of proposals',
  fits: listOf('proposals', (p) => isObject(p) && typeof p.id === 'string' && Array.isArray(p.changes) && Array.isArray(p.impact)),
};
export const FLAG_HEALTH_LIST: AnswerShape = {
  what: "a list of flags' health",
  fits: listOf('flags', (f) => isObject(f) && typeof f.key === 'string' && Array.isArray(f.reasons)),
};
export const CHANGE_PREVIEW: AnswerShape = {
  what: 'a change preview',
  fits: (body) => isObject(body) && Array.isArray(body.changes) && Array.isArray(body.impact),
};
export const AUDIT_PAGE: AnswerShape = { what: 'a page of the audit trail', fits: listOf('entries', isObject) };
