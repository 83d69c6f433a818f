import { describe, expect, it } from 'vitest';
import { draftMessages, hasMessages } from '../../../packages/dashboard/src/logic/draft-messages.js';

describe('validation messages in the editor', () => {
  it('puts each server issue under its field; inside the rules with line and path', () => {
    const messages = draftMessages([
      { field: 'rolloutPct', message: 'must be a number from 0 to 100' },
      { field: 'rules[1].conditions[0].value', message: 'must be a number for op "gt"', line: 11, column: 14 },
      { field: 'rules', message: 'YAML syntax error: Unexpected flow-seq-end', line: 3, column: 1 },
      { field: 'rules', message: 'must have at most 64 rules' },
      { field: 'valueOff', message: "must be a string, as the flag's kind is string" },
    ]);
    expect(messages).toEqual({
      enabled: [],
      rolloutPct: ['must be a number from 0 to 100'],
      valueOn: [],
      valueOff: ["must be a string, as the flag's kind is string"],
      rules: [
        'line 11, column 14: rules[1].conditions[0].value: must be a number for op "gt"',
        'line 3, column 1: YAML syntax error: Unexpected flow-seq-end',
        'must have at most 64 rules',
      ],
      form: [],
    });
    expect(hasMessages(messages)).toBe(true);
  });

  it("keeps a local parse message and drops the server's issue for the same field", () => {
    const messages = draftMessages([{ field: 'valueOn', message: 'must be a number' }], { valueOn: 'is not valid JSON: Unexpected token' });
    expect(messages.valueOn).toEqual(['is not valid JSON: Unexpected token']);
  });

  it('shows an issue it cannot place under the form, with its field', () => {
    expect(draftMessages([{ field: 'expectedVersion', message: 'must be an integer' }]).form).toEqual([
      'expectedVersion: must be an integer',
    ]);
  });

  it('has nothing to say about a valid draft', () => {
    expect(hasMessages(draftMessages([]))).toBe(false);
  });
});
