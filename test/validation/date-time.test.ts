import { describe, expect, it } from 'vitest';
import { isDateTime } from '../../src/foundations/validation/index.js';

describe('an ISO 8601 date-time (RFC 3339)', () => {
  it.each(['2025-01-15T09:30:00Z', '2025-01-15T09:30:00.5Z', '2024-02-29T00:00:00Z', '2000-02-29T00:00:00Z', '2025-12-31T23:59:59-11:30'])(
    'accepts %s',
    (value) => expect(isDateTime(value)).toBe(true),
  );

  it.each([
    '2025-01-15',
    '2025-01-15T09:30Z',
    '2025-01-15T09:30:00',
    '2025-13-01T00:00:00Z',
    '2025-04-31T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2025-01-15T09:60:00Z',
    '2025-01-15T09:30:00+24:00',
    '2025-01-15t09:30:00z',
  ])('refuses %s', (value) => expect(isDateTime(value)).toBe(false));
});
