import { OPERATORS } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { validateDocument } from '../../src/foundations/validation/index.js';
import { condition, config, rule } from './fixtures.js';

/** Issues of a config whose one rule has one condition `op value`. */
function check(op: string, value: unknown) {
  return validateDocument('environment-config', config({ rules: [rule('r', { conditions: [condition(op, value)] })] }));
}

const PATH = '/rules/0/conditions/0/value';

// Contract §4: the value type each operator needs; a wrong type is refused at write time.
const CASES: Record<string, { accepted: unknown[]; refused: unknown[]; message: string }> = {
  eq: {
    accepted: ['DE', 3, 2.5, true, null],
    refused: [['DE'], { a: 1 }],
    message: 'must be a string, number, boolean or null for op "eq"',
  },
  neq: { accepted: ['DE', 0, false, null], refused: [[1], {}], message: 'must be a string, number, boolean or null for op "neq"' },
  in: {
    accepted: [[], ['DE', 'FR'], [1, 'a', true, null]],
    refused: ['DE', 1, [['nested']], [{ a: 1 }]],
    message: 'must be an array of strings, numbers, booleans or nulls for op "in"',
  },
  not_in: {
    accepted: [['DE'], [1, 2]],
    refused: ['DE', null],
    message: 'must be an array of strings, numbers, booleans or nulls for op "not_in"',
  },
  contains: {
    accepted: ['@example.com', 3, true],
    refused: [['a'], { a: 1 }],
    message: 'must be a string, number, boolean or null for op "contains"',
  },
  gt: { accepted: [0, -3, 2.5], refused: ['3', true, null, [1]], message: 'must be a number for op "gt"' },
  gte: { accepted: [10], refused: ['10'], message: 'must be a number for op "gte"' },
  lt: { accepted: [30], refused: [false], message: 'must be a number for op "lt"' },
  lte: { accepted: [0.2], refused: [null], message: 'must be a number for op "lte"' },
  semver_eq: {
    accepted: ['1.2.3', '0.0.0', '4.1.0-rc.1', '1.0.0+build.7', '1.0.0-alpha.beta+exp.sha.5114f85'],
    refused: ['1.2', 'v1.2.3', '01.2.3', '1.2.3.4', '1.2.3-', 1.2, 123],
    message: 'must be a semantic version string such as "1.2.3" for op "semver_eq"',
  },
  semver_gt: {
    accepted: ['4.2.0'],
    refused: ['latest', '4.2'],
    message: 'must be a semantic version string such as "1.2.3" for op "semver_gt"',
  },
  semver_lt: { accepted: ['4.0.0'], refused: ['4', ''], message: 'must be a semantic version string such as "1.2.3" for op "semver_lt"' },
};

describe('a condition value', () => {
  it('has a case for each of the 12 operators', () => {
    expect(Object.keys(CASES).sort()).toEqual([...OPERATORS].sort());
  });

  for (const [op, { accepted, refused, message }] of Object.entries(CASES)) {
    describe(`for op "${op}"`, () => {
      it.each(accepted.map((v) => [v]))('accepts %j', (value) => {
        expect(check(op, value)).toEqual([]);
      });

      it.each(refused.map((v) => [v]))('refuses %j with one message naming the operator', (value) => {
        expect(check(op, value)).toEqual([{ path: PATH, message }]);
      });
    });
  }

  it('is required', () => {
    const issues = validateDocument('environment-config', config({ rules: [rule('r', { conditions: [{ attribute: 'a', op: 'eq' }] })] }));
    expect(issues).toEqual([{ path: PATH, message: 'is required' }]);
  });
});
