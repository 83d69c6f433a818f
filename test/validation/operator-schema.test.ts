import { readFileSync } from 'node:fs';
import { OPERATOR_VALUE_TYPE, OPERATORS, type Operator, SEGMENT_OPERATORS } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { API_SCHEMAS, DOCUMENT_SCHEMAS, validateDocument } from '../../src/foundations/validation/index.js';
import { condition, config, rule } from './fixtures.js';

type Schema = Record<string, unknown>;

const SCHEMAS = new URL('../../schemas/', import.meta.url);
const read = (file: string): Schema => JSON.parse(readFileSync(new URL(file, SCHEMAS), 'utf8')) as Schema;
const FILES = [
  'common.schema.json',
  ...DOCUMENT_SCHEMAS.map((name) => `${name}.schema.json`),
  ...API_SCHEMAS.map((name) => `api/${name}.schema.json`),
];
const config$defs = read('environment-config.schema.json').$defs as Record<string, Schema>;
const ALL_OPERATORS: readonly string[] = [...OPERATORS, ...SEGMENT_OPERATORS];

/** Every `enum` of the schema files that names an operator, with where it is. */
function operatorEnums(): Array<{ at: string; values: unknown[] }> {
  const found: Array<{ at: string; values: unknown[] }> = [];
  const walk = (node: unknown, at: string) => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, `${at}/${i}`);
      return;
    }
    for (const [key, child] of Object.entries(node)) {
      if (key === 'enum' && Array.isArray(child) && child.some((v) => ALL_OPERATORS.includes(v as string)))
        found.push({ at, values: child });
      else walk(child, `${at}/${key}`);
    }
  };
  for (const file of FILES) walk(read(file), file);
  return found;
}

/** The kind of value a then-branch of operatorValue asks for, in the words of the core's OPERATOR_VALUE_TYPE. */
function valueKind(value: Schema): string {
  if (value.$ref === 'common.schema.json#/$defs/conditionScalar') return 'scalar';
  if (value.$ref === 'common.schema.json#/$defs/conditionList') return 'array';
  if (value.$ref === 'common.schema.json#/$defs/semver') return 'semver';
  if (value.type === 'number' && Object.keys(value).length === 1) return 'number';
  throw new Error(`operatorValue asks for a value the test does not know: ${JSON.stringify(value)}`);
}

// A `contains` operand may be any scalar (the core compares its text); the schema checks it as a scalar.
const SCHEMA_KIND: Readonly<Record<(typeof OPERATOR_VALUE_TYPE)[Operator], string>> = {
  scalar: 'scalar',
  'string-or-scalar': 'scalar',
  array: 'array',
  number: 'number',
  semver: 'semver',
};

describe('the condition operators in the schemas', () => {
  it("are listed once, in environment-config's $defs, as the core lists them", () => {
    expect(config$defs.operator?.enum).toEqual([...OPERATORS]);
    expect(config$defs.segmentOperator?.enum).toEqual([...SEGMENT_OPERATORS]);
  });

  it('appear in no other enum than those two and the value groups of operatorValue', () => {
    const elsewhere = operatorEnums().filter(
      ({ at }) =>
        at !== 'environment-config.schema.json/$defs/operator' &&
        at !== 'environment-config.schema.json/$defs/segmentOperator' &&
        !/^environment-config\.schema\.json\/\$defs\/operatorValue\/allOf\/\d+\/if\/properties\/op$/.test(at),
    );
    expect(elsewhere).toEqual([]);
  });

  it("ask of each operator's value what the core's OPERATOR_VALUE_TYPE says, each operator in one group", () => {
    const groups = (config$defs.operatorValue?.allOf ?? []) as Array<{ if: Schema; then: Schema }>;
    const kinds: Record<string, string[]> = {};
    for (const group of groups) {
      const ops = ((group.if.properties as Record<string, Schema>).op.enum ?? []) as string[];
      const kind = valueKind((group.then.properties as Record<string, Schema>).value);
      for (const op of ops) kinds[op] = [...(kinds[op] ?? []), kind];
    }
    expect(kinds).toEqual(Object.fromEntries(OPERATORS.map((op) => [op, [SCHEMA_KIND[OPERATOR_VALUE_TYPE[op]]]])));
  });

  it('are what a rule condition and a segment condition refer to', () => {
    const op = (def: string) => (config$defs[def].properties as Record<string, Schema>).op;
    expect(JSON.stringify(op('condition'))).toContain('#/$defs/operator');
    expect(JSON.stringify(op('condition'))).toContain('#/$defs/segmentOperator');
    expect(JSON.stringify(op('attributeCondition'))).toContain('#/$defs/operator');
    expect(JSON.stringify(op('attributeCondition'))).not.toContain('segmentOperator');
  });
});

describe('an unknown operator', () => {
  it("in a rule's condition is refused with one message naming every operator", () => {
    const issues = validateDocument('environment-config', config({ rules: [rule('r', { conditions: [condition('like', 'x')] })] }));
    expect(issues).toEqual([
      {
        path: '/rules/0/conditions/0/op',
        message: `must be one of ${ALL_OPERATORS.map((op) => JSON.stringify(op)).join(', ')}`,
      },
    ]);
  });

  it("in a segment's condition, or a segment operator there, is refused naming the attribute operators", () => {
    const message = `must be one of ${OPERATORS.join(', ')} (a segment's conditions cannot refer to segments)`;
    for (const op of ['like', 'in_segment']) {
      const issues = validateDocument('segment', { key: 'beta', conditions: [condition(op, 'x')] });
      expect(issues).toEqual([{ path: '/conditions/0/op', message }]);
    }
  });
});

describe('a badly typed value of a segment condition', () => {
  it('is refused as for a rule, naming the operator', () => {
    const issues = validateDocument('segment', { key: 'beta', conditions: [condition('gt', 'x'), condition('in', 1)] });
    expect(issues).toEqual([
      { path: '/conditions/0/value', message: 'must be a number for op "gt"' },
      { path: '/conditions/1/value', message: 'must be an array of strings, numbers, booleans or nulls for op "in"' },
    ]);
  });
});
