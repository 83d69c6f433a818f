import { describe, expect, it } from 'vitest';
import { parseRepositoryFile, serializeRepositoryFile } from '../../src/foundations/repository/index.js';
import { formatIssue, pastStepIssues, validateBody, validateDocument } from '../../src/foundations/validation/index.js';
import { config, refusal } from './fixtures.js';

const FILE = 'projects/shop/environments/prod/checkout-v2.yaml';

function steps(count: number, from = Date.UTC(2026, 10, 24, 9)) {
  return Array.from({ length: count }, (_, i) => ({ at: new Date(from + i * 3_600_000).toISOString(), set: { rolloutPct: i % 101 } }));
}

describe('a schedule in an environment config', () => {
  it('is valid with up to 50 ascending steps that set enabled, rolloutPct or both', () => {
    expect(validateDocument('environment-config', config({ schedule: steps(50) }))).toEqual([]);
    const both = [{ at: '2026-11-24T09:00:00Z', set: { enabled: true, rolloutPct: 25 } }];
    expect(validateDocument('environment-config', config({ schedule: both }))).toEqual([]);
  });

  it('refuses 51 steps', () => {
    expect(validateDocument('environment-config', config({ schedule: steps(51) }))).toEqual([
      { path: '/schedule', message: 'must have at most 50 steps' },
    ]);
  });

  it('refuses steps out of order or at the same time, naming the later step', () => {
    const schedule = [
      { at: '2026-11-24T09:00:00Z', set: { rolloutPct: 25 } },
      { at: '2026-11-24T08:00:00Z', set: { rolloutPct: 50 } },
      { at: '2026-11-24T08:00:00.000Z', set: { rolloutPct: 75 } },
    ];
    expect(validateDocument('environment-config', config({ schedule }), FILE).map((i) => i.path)).toEqual([
      '/schedule/1/at',
      '/schedule/2/at',
    ]);
  });

  it('refuses unknown fields in set, an empty set, and a step without set', () => {
    const issues = validateDocument(
      'environment-config',
      config({
        schedule: [
          { at: '2026-11-24T09:00:00Z', set: { rolloutPct: 25, valueOn: 'x' } },
          { at: '2026-11-25T09:00:00Z', set: {} },
          { at: '2026-11-26T09:00:00Z' },
        ],
      }),
    );
    expect(issues).toEqual([
      { path: '/schedule/0/set/valueOn', message: 'is not an allowed field' },
      { path: '/schedule/1/set', message: 'must set enabled, rolloutPct or both' },
      { path: '/schedule/2/set', message: 'is required' },
    ]);
  });

  it('refuses a time that is not UTC or not a date-time, and a percentage out of range', () => {
    const issues = validateDocument(
      'environment-config',
      config({
        schedule: [
          { at: '2026-11-24T09:00:00+01:00', set: { rolloutPct: 25 } },
          { at: 'tomorrow at 9', set: { rolloutPct: 50 } },
          { at: '2026-11-26T09:00:00Z', set: { rolloutPct: 101 } },
        ],
      }),
    );
    expect(issues).toEqual([
      { path: '/schedule/0/at', message: 'must be an ISO-8601 UTC date-time such as 2026-11-24T09:00:00Z' },
      { path: '/schedule/1/at', message: 'must be an ISO-8601 UTC date-time such as 2026-11-24T09:00:00Z' },
      { path: '/schedule/2/set/rolloutPct', message: 'must be a number from 0 to 100' },
    ]);
  });

  it('is read from YAML and written back in the same form, after the rules; an empty one is left out', () => {
    const text = [
      'enabled: true',
      'rolloutPct: 5',
      'valueOn: true',
      'valueOff: false',
      'version: 3',
      'rules: []',
      'schedule:',
      '  - at: 2026-11-24T09:00:00Z',
      '    set:',
      '      rolloutPct: 25',
      '  - at: 2026-11-25T09:00:00Z',
      '    set:',
      '      enabled: true',
      '      rolloutPct: 100',
      '',
    ].join('\n');
    const parsed = parseRepositoryFile(FILE, text);
    expect(parsed.issues).toEqual([]);
    expect(parsed.file?.kind === 'config' && parsed.file.value.schedule).toEqual([
      { at: '2026-11-24T09:00:00Z', set: { rolloutPct: 25 } },
      { at: '2026-11-25T09:00:00Z', set: { enabled: true, rolloutPct: 100 } },
    ]);
    expect(serializeRepositoryFile(parsed.file!)).toBe(text);
    const empty = parseRepositoryFile(FILE, 'enabled: true\nrolloutPct: 5\nvalueOn: true\nvalueOff: false\nschedule: []\n');
    expect(empty.file?.kind === 'config' && 'schedule' in empty.file.value).toBe(false);
  });

  it('reports a bad step with its line and column', () => {
    const text =
      'enabled: true\nrolloutPct: 5\nvalueOn: true\nvalueOff: false\nschedule:\n  - at: 2026-11-24T09:00:00Z\n    set: { rollout: 25 }\n';
    expect(parseRepositoryFile(FILE, text).issues.map(formatIssue)).toEqual([
      `${FILE}:7:21: /schedule/0/set/rollout: is not an allowed field`,
    ]);
  });
});

describe('a schedule in a config update body', () => {
  it('is accepted, and [] cancels a schedule', () => {
    expect(validateBody('config-update', { schedule: steps(3) })).toEqual({ schedule: steps(3) });
    expect(validateBody('config-update', { schedule: [] })).toEqual({ schedule: [] });
  });

  it('is refused with invalid_input naming the field when unordered, too long or with unknown fields', () => {
    const unordered = steps(2).reverse();
    expect(refusal(() => validateBody('config-update', { schedule: unordered })).field).toBe('schedule[1].at');
    expect(refusal(() => validateBody('config-update', { schedule: steps(51) })).message).toBe('schedule: must have at most 50 steps');
    const unknown = refusal(() => validateBody('config-update', { schedule: [{ at: '2026-11-24T09:00:00Z', set: { rules: [] } }] }));
    expect(unknown.message).toBe('schedule[0].set.rules: is not an allowed field');
  });

  it('names the steps that are not in the future', () => {
    const now = new Date('2026-11-24T09:00:00Z');
    const schedule = [
      { at: '2026-11-24T08:59:59Z', set: { rolloutPct: 5 } },
      { at: '2026-11-24T09:00:00Z', set: { rolloutPct: 10 } },
      { at: '2026-11-24T09:00:01Z', set: { rolloutPct: 15 } },
    ];
    expect(pastStepIssues(schedule, now).map((i) => i.path)).toEqual(['/schedule/0/at', '/schedule/1/at']);
  });
});
