import { describe, expect, it } from 'vitest';
import { inputToValue, parseRollout, valueToInput } from '../../../packages/dashboard/src/logic/value-input.js';

describe('value inputs', () => {
  it('show strings bare and everything else as JSON', () => {
    expect(valueToInput('string', 'blue')).toBe('blue');
    expect(valueToInput('boolean', true)).toBe('true');
    expect(valueToInput('number', 2.5)).toBe('2.5');
    expect(valueToInput('json', { a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
  });

  it('read back what they show, for every kind', () => {
    for (const [kind, value] of [
      ['string', 'blue'],
      ['string', ''],
      ['boolean', false],
      ['number', -3],
      ['json', { show: true, text: 'Sale' }],
      ['json', null],
    ] as const) {
      expect(inputToValue(kind, valueToInput(kind, value))).toEqual({ ok: true, value });
    }
  });

  it('explain what is wrong with an input', () => {
    expect(inputToValue('number', 'ten')).toEqual({ ok: false, message: 'must be a number' });
    expect(inputToValue('number', ' ')).toEqual({ ok: false, message: 'must be a number' });
    expect(inputToValue('boolean', 'yes')).toEqual({ ok: false, message: 'must be true or false' });
    expect(inputToValue('json', '{ nope')).toMatchObject({ ok: false, message: expect.stringMatching(/^is not valid JSON: /) });
  });

  it('take a rollout from 0 to 100, fractions included', () => {
    expect(parseRollout('12.5')).toEqual({ ok: true, value: 12.5 });
    expect(parseRollout('100')).toEqual({ ok: true, value: 100 });
    for (const bad of ['', '-1', '100.1', 'half'])
      expect(parseRollout(bad), bad).toEqual({ ok: false, message: 'must be a number from 0 to 100' });
  });
});
