import { InvalidInputError } from '../../src/foundations/errors/kinds.js';

/** Small valid documents that tests change one field at a time. */
export function condition(op: string, value: unknown, attribute = 'country') {
  return { attribute, op, value };
}

export function rule(id: string, extra: Record<string, unknown> = {}) {
  return { id, serve: 'on', conditions: [condition('eq', 'DE')], ...extra };
}

export function config(extra: Record<string, unknown> = {}) {
  return { enabled: true, rolloutPct: 50, valueOn: true, valueOff: false, version: 0, rules: [], ...extra };
}

export function rules(count: number) {
  return Array.from({ length: count }, (_, i) => rule(`r${i}`));
}

export function conditions(count: number) {
  return Array.from({ length: count }, (_, i) => condition('eq', `v${i}`, `a${i}`));
}

/** The InvalidInputError `run` throws (a refused body, plan or file), for assertions on its message and field. */
export function refusal(run: () => unknown): InvalidInputError {
  try {
    run();
  } catch (err) {
    if (err instanceof InvalidInputError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}
