import { OPERATORS } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { holds } from './support.js';

const withAttr = (value: unknown) => ({ userId: 'u1', attributes: { a: value } });
const on = (op: string, value: unknown) => ({ attribute: 'a', op, value });

describe('conditions', () => {
  describe('a missing attribute', () => {
    const values: Record<string, unknown> = {
      eq: 'x',
      neq: 'x',
      in: ['x'],
      not_in: ['x'],
      contains: 'x',
      gt: 1,
      gte: 1,
      lt: 1,
      lte: 1,
      semver_eq: '1.0.0',
      semver_gt: '1.0.0',
      semver_lt: '1.0.0',
    };
    it.each(OPERATORS)('makes %s false, neq and not_in included', (op) => {
      expect(holds(on(op, values[op]), { userId: 'u1', attributes: { other: 'x' } })).toBe(false);
      expect(holds(on(op, values[op]), { userId: 'u1' })).toBe(false);
      expect(holds(on(op, values[op]), {})).toBe(false);
    });

    it('is not the same as null: null is a JSON scalar that eq null matches', () => {
      expect(holds(on('eq', null), withAttr(null))).toBe(true);
      expect(holds(on('neq', 'x'), withAttr(null))).toBe(true);
    });

    it('includes inherited object properties such as "constructor"', () => {
      expect(holds({ attribute: 'constructor', op: 'neq', value: 'x' }, { attributes: {} })).toBe(false);
      expect(holds({ attribute: 'toString', op: 'not_in', value: ['x'] }, { attributes: {} })).toBe(false);
    });
  });

  describe('the attribute userId', () => {
    it('resolves to context.userId', () => {
      expect(holds({ attribute: 'userId', op: 'eq', value: 'u1' }, { userId: 'u1' })).toBe(true);
    });
    it('falls back to attributes.userId when context.userId is absent', () => {
      expect(holds({ attribute: 'userId', op: 'eq', value: 'u2' }, { attributes: { userId: 'u2' } })).toBe(true);
    });
    it('prefers context.userId, the id that bucketing uses, over attributes.userId', () => {
      const context = { userId: 'u1', attributes: { userId: 'u2' } };
      expect(holds({ attribute: 'userId', op: 'eq', value: 'u1' }, context)).toBe(true);
      expect(holds({ attribute: 'userId', op: 'eq', value: 'u2' }, context)).toBe(false);
    });
  });

  describe('eq', () => {
    it('holds for strictly equal JSON scalars', () => {
      for (const v of ['DE', 3, 0, -1.5, true, false, null, '']) expect(holds(on('eq', v), withAttr(v))).toBe(true);
    });
    it('does not coerce between types', () => {
      expect(holds(on('eq', 3), withAttr('3'))).toBe(false);
      expect(holds(on('eq', '3'), withAttr(3))).toBe(false);
      expect(holds(on('eq', false), withAttr(0))).toBe(false);
      expect(holds(on('eq', null), withAttr(false))).toBe(false);
    });
    it('is case-sensitive', () => {
      expect(holds(on('eq', 'DE'), withAttr('de'))).toBe(false);
    });
    it('is false for an array or object attribute, even one that looks equal', () => {
      expect(holds(on('eq', 'DE'), withAttr(['DE']))).toBe(false);
      expect(holds(on('eq', 'DE'), withAttr({ toString: 'DE' }))).toBe(false);
      expect(holds(on('eq', ['DE']), withAttr(['DE']))).toBe(false);
    });
    it('is false for non-JSON numbers (NaN), which an SDK caller could pass', () => {
      expect(holds(on('eq', 1), withAttr(Number.NaN))).toBe(false);
    });
  });

  describe('neq', () => {
    it('holds for a scalar that differs, type included', () => {
      expect(holds(on('neq', 'DE'), withAttr('FR'))).toBe(true);
      expect(holds(on('neq', 3), withAttr('3'))).toBe(true);
    });
    it('is false for an equal scalar', () => {
      expect(holds(on('neq', 'DE'), withAttr('DE'))).toBe(false);
    });
    it('fails closed for an array or object attribute', () => {
      expect(holds(on('neq', 'DE'), withAttr(['FR']))).toBe(false);
      expect(holds(on('neq', 'DE'), withAttr({ c: 'FR' }))).toBe(false);
      expect(holds(on('neq', 'DE'), withAttr(Number.POSITIVE_INFINITY))).toBe(false);
    });
  });

  describe('in', () => {
    const long = Array.from({ length: 40 }, (_, i) => `c${i}`);
    it('holds when the attribute is a member, by strict equality', () => {
      expect(holds(on('in', ['DE', 'FR']), withAttr('FR'))).toBe(true);
      expect(holds(on('in', [1, 2]), withAttr(2))).toBe(true);
      expect(holds(on('in', [1, 2]), withAttr('2'))).toBe(false);
    });
    it('is false for a non-member and for an empty list', () => {
      expect(holds(on('in', ['DE', 'FR']), withAttr('US'))).toBe(false);
      expect(holds(on('in', []), withAttr('US'))).toBe(false);
    });
    it('behaves the same on long lists', () => {
      expect(holds(on('in', long), withAttr('c39'))).toBe(true);
      expect(holds(on('in', long), withAttr('c40'))).toBe(false);
      expect(holds(on('in', [...long, 7]), withAttr('7'))).toBe(false);
    });
    it('is false for an array attribute', () => {
      expect(holds(on('in', ['DE']), withAttr(['DE']))).toBe(false);
    });
  });

  describe('not_in', () => {
    const long = Array.from({ length: 40 }, (_, i) => `c${i}`);
    it('holds when a scalar attribute is not a member', () => {
      expect(holds(on('not_in', ['DE', 'FR']), withAttr('US'))).toBe(true);
      expect(holds(on('not_in', []), withAttr('US'))).toBe(true);
      expect(holds(on('not_in', long), withAttr('c40'))).toBe(true);
    });
    it('is false for a member', () => {
      expect(holds(on('not_in', ['DE', 'FR']), withAttr('DE'))).toBe(false);
      expect(holds(on('not_in', long), withAttr('c0'))).toBe(false);
    });
    it('fails closed for an array or object attribute', () => {
      expect(holds(on('not_in', ['DE']), withAttr(['US']))).toBe(false);
      expect(holds(on('not_in', long), withAttr({}))).toBe(false);
    });
  });

  describe('contains', () => {
    it('holds when a string attribute contains the string value', () => {
      expect(holds(on('contains', '@example.com'), withAttr('ana@example.com'))).toBe(true);
      expect(holds(on('contains', 'Beta'), withAttr('beta'))).toBe(false);
    });
    it('holds when an array attribute has the value as a member, by strict equality', () => {
      expect(holds(on('contains', 'beta'), withAttr(['alpha', 'beta']))).toBe(true);
      expect(holds(on('contains', 2), withAttr([1, 2]))).toBe(true);
      expect(holds(on('contains', 2), withAttr(['2']))).toBe(false);
      expect(holds(on('contains', 'beta'), withAttr(['betamax']))).toBe(false);
    });
    it('is false for other attribute types and for a non-string value on a string', () => {
      expect(holds(on('contains', '1'), withAttr(12))).toBe(false);
      expect(holds(on('contains', 5), withAttr('a5'))).toBe(false);
      expect(holds(on('contains', 'x'), withAttr({ x: 1 }))).toBe(false);
    });
  });

  describe.each<[string, Array<[number, boolean]>]>([
    [
      'gt',
      [
        [19, true],
        [18, false],
        [17, false],
      ],
    ],
    [
      'gte',
      [
        [19, true],
        [18, true],
        [17, false],
      ],
    ],
    [
      'lt',
      [
        [19, false],
        [18, false],
        [17, true],
      ],
    ],
    [
      'lte',
      [
        [19, false],
        [18, true],
        [17, true],
      ],
    ],
  ])('%s', (op, table) => {
    it.each(table)(`compares the number %d with 18: %s`, (attribute, expected) => {
      expect(holds(on(op, 18), withAttr(attribute))).toBe(expected);
    });
    it('is false unless both are numbers: no string coercion', () => {
      expect(holds(on(op, 18), withAttr('17'))).toBe(false);
      expect(holds(on(op, 18), withAttr('19'))).toBe(false);
      expect(holds(on(op, '18'), withAttr(17))).toBe(false);
      expect(holds(on(op, '18'), withAttr(19))).toBe(false);
      expect(holds(on(op, 18), withAttr(null))).toBe(false);
      expect(holds(on(op, 0), withAttr(true))).toBe(false);
    });
    it('is false for non-finite numbers', () => {
      expect(holds(on(op, 18), withAttr(Number.NaN))).toBe(false);
      expect(holds(on(op, 18), withAttr(op.startsWith('g') ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY))).toBe(false);
    });
  });

  describe('semver_eq / semver_gt / semver_lt', () => {
    it('compare semantic versions by precedence', () => {
      expect(holds(on('semver_gt', '2.0.0'), withAttr('2.0.1'))).toBe(true);
      expect(holds(on('semver_gt', '9.0.0'), withAttr('10.0.0'))).toBe(true);
      expect(holds(on('semver_lt', '2.0.0'), withAttr('2.0.0-rc.1'))).toBe(true);
      expect(holds(on('semver_eq', '2.0.0'), withAttr('2.0.0+build.5'))).toBe(true);
      expect(holds(on('semver_eq', '2.0.0'), withAttr('2.0.1'))).toBe(false);
    });
    it('are false when the attribute is not a valid semantic version', () => {
      for (const bad of ['v2.1.0', '2.1', '02.1.0', 'latest', 210, null, ['2.1.0']]) {
        expect(holds(on('semver_gt', '2.0.0'), withAttr(bad)), JSON.stringify(bad)).toBe(false);
        expect(holds(on('semver_lt', '2.0.0'), withAttr(bad)), JSON.stringify(bad)).toBe(false);
      }
    });
    it('are false when the condition value is not a valid semantic version', () => {
      expect(holds(on('semver_gt', 'v2.0.0'), withAttr('3.0.0'))).toBe(false);
      expect(holds(on('semver_lt', 2), withAttr('1.0.0'))).toBe(false);
    });
  });

  describe('fail closed', () => {
    it('an unknown operator matches nothing', () => {
      expect(holds(on('regex', '.*'), withAttr('x'))).toBe(false);
      expect(holds(on('not_equals', 'y'), withAttr('x'))).toBe(false);
    });
    it('a value of the wrong type for its operator matches nothing, negations included', () => {
      expect(holds(on('in', 'DE'), withAttr('DE'))).toBe(false);
      expect(holds(on('not_in', 'DE'), withAttr('FR'))).toBe(false);
      expect(holds(on('neq', { a: 1 }), withAttr('FR'))).toBe(false);
      expect(holds(on('contains', ['x']), withAttr([['x']]))).toBe(false);
    });
  });
});
