import { OPERATOR_VALUE_TYPE, type Operator } from '@flagops/core';
import type { ErrorObject } from 'ajv/dist/2020.js';
import type { ValidationIssue } from './issue.js';

/** JSON pointer segment escaping (RFC 6901). */
export function escapePointerSegment(segment: string | number): string {
  return String(segment).replaceAll('~', '~0').replaceAll('/', '~1');
}

const OPERATOR_VALUE_WORDS: Readonly<Record<(typeof OPERATOR_VALUE_TYPE)[Operator], string>> = {
  scalar: 'a string, number, boolean or null',
  array: 'an array of strings, numbers, booleans or nulls',
  'string-or-scalar': 'a string, number, boolean or null',
  number: 'a number',
  semver: 'a semantic version string such as "1.2.3"',
};

/** The one message for a condition value of the wrong type, instead of the if/then noise ajv reports. */
export function operatorValueMessage(op: Operator): string {
  return `must be ${OPERATOR_VALUE_WORDS[OPERATOR_VALUE_TYPE[op]]} for op "${op}"`;
}

// `/rules/3/conditions/1/value` (or deeper, for an item of an `in` list): the condition's value.
const CONDITION_VALUE = /^(.*\/conditions\/\d+)\/value(?:\/.*)?$/;

function valueAt(document: unknown, pointer: string): unknown {
  let node = document;
  for (const raw of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[raw.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return node;
}

function article(type: string): string {
  const words = type.split(',').map((t) => (t === 'null' ? 'null' : `${/^[aeiou]/.test(t) ? 'an' : 'a'} ${t}`));
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

function annotation(error: ErrorObject): string | undefined {
  const note = error.parentSchema?.['x-error'] as string | Record<string, string> | undefined;
  if (typeof note === 'string') return note;
  return note?.[error.keyword];
}

function defaultMessage(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return `must be ${article(String(p.type))}`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${p.comparison} ${p.limit}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${p.limit} characters long`;
    case 'maxLength':
      return `must be at most ${p.limit} characters long`;
    case 'maxItems':
      return `must have at most ${p.limit} items`;
    case 'pattern':
      return `must match ${p.pattern}`;
    case 'format':
      return `must be a valid ${p.format}`;
    default:
      return error.message ?? `fails ${error.keyword}`;
  }
}

/**
 * An anyOf of enums (a condition's op: an attribute or a segment operator) is one list of allowed values: where
 * every branch of a failed anyOf failed as an enum, the anyOf answers once, naming all their values.
 */
function enumUnions(errors: readonly ErrorObject[]): Map<string, unknown[]> {
  const enums = new Map<string, ErrorObject[]>();
  for (const error of errors) {
    if (error.keyword === 'enum') enums.set(error.instancePath, [...(enums.get(error.instancePath) ?? []), error]);
  }
  const unions = new Map<string, unknown[]>();
  for (const error of errors) {
    if (error.keyword !== 'anyOf') continue;
    const branches = enums.get(error.instancePath) ?? [];
    if (branches.length !== (error.parentSchema?.anyOf as unknown[] | undefined)?.length) continue;
    unions.set(
      error.instancePath,
      branches.flatMap((branch) => (branch.params as { allowedValues: unknown[] }).allowedValues),
    );
  }
  return unions;
}

const NULL_BRANCH = /\/(?:oneOf|anyOf)\/\d+\/type$/;

const isNullBranch = (error: ErrorObject) =>
  error.keyword === 'type' && (error.params as { type?: unknown }).type === 'null' && NULL_BRANCH.test(error.schemaPath);

/**
 * Where a value failed a union with a null branch (a PATCH field where null removes it) and the other branch
 * says what is wrong with it: there, "must be null" and the union's own error are noise.
 */
function nullableUnions(errors: readonly ErrorObject[]): Set<string> {
  const paths = new Set<string>();
  for (const error of errors) {
    if (!isNullBranch(error)) continue;
    const at = error.instancePath;
    const explained = errors.some(
      (other) =>
        !isNullBranch(other) &&
        other.keyword !== 'oneOf' &&
        other.keyword !== 'anyOf' &&
        (other.instancePath === at || other.instancePath.startsWith(`${at}/`)),
    );
    if (explained) paths.add(at);
  }
  return paths;
}

/**
 * Ajv errors → issues with a JSON pointer and a message that names what is wrong, one per problem.
 * `document` is the validated value, read to name the operator of a badly typed condition value.
 */
export function ajvErrorsToIssues(errors: readonly ErrorObject[], document: unknown, file?: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  const push = (path: string, message: string) => {
    const id = `${path}\u0000${message}`;
    if (seen.has(id)) return;
    seen.add(id);
    issues.push(file === undefined ? { path, message } : { file, path, message });
  };
  const unions = enumUnions(errors);
  const nullable = nullableUnions(errors);
  for (const error of errors) {
    if (nullable.has(error.instancePath)) {
      if (isNullBranch(error) || error.keyword === 'oneOf' || error.keyword === 'anyOf') continue;
      if (error.keyword === 'type') {
        push(error.instancePath, `must be ${article(`${String((error.params as { type: unknown }).type)},null`)}`);
        continue;
      }
    }
    // `if` failures only say which branch was taken; the `then` errors carry the content.
    if (error.keyword === 'if') continue;
    const union = unions.get(error.instancePath);
    if (union && error.keyword === 'enum') continue; // said by its anyOf, next
    if (union && error.keyword === 'anyOf') {
      const note = annotation(error);
      push(
        error.instancePath,
        note?.replace('{values}', union.join(', ')) ?? `must be one of ${union.map((v) => JSON.stringify(v)).join(', ')}`,
      );
      continue;
    }
    const p = error.params as Record<string, unknown>;
    if (error.keyword === 'required') {
      push(`${error.instancePath}/${escapePointerSegment(String(p.missingProperty))}`, 'is required');
      continue;
    }
    if (error.keyword === 'additionalProperties') {
      push(`${error.instancePath}/${escapePointerSegment(String(p.additionalProperty))}`, 'is not an allowed field');
      continue;
    }
    if (error.keyword === 'propertyNames') continue; // reported by the name's own error below
    if (error.propertyName !== undefined) {
      push(`${error.instancePath}/${escapePointerSegment(error.propertyName)}`, `this key ${annotation(error) ?? defaultMessage(error)}`);
      continue;
    }
    // A condition's `value` is constrained by its operator: a wrong type is reported as the operator's
    // expectation; only the size limits (annotated) speak for themselves.
    const condition = CONDITION_VALUE.exec(error.instancePath);
    if (condition && annotation(error) === undefined) {
      const op = (valueAt(document, condition[1]) as { op?: Operator } | undefined)?.op;
      if (op !== undefined && op in OPERATOR_VALUE_TYPE) {
        push(`${condition[1]}/value`, operatorValueMessage(op));
        continue;
      }
    }
    push(error.instancePath, annotation(error) ?? defaultMessage(error));
  }
  return issues;
}
