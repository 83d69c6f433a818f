import { describe, expect, it } from 'vitest';
import { validateDocument } from '../../src/foundations/validation/index.js';

const kill = (extra: Record<string, unknown> = {}) => ({ killedAt: '2025-03-02T14:05:00Z', killedBy: 'svc_agt_3kq9x2ab', ...extra });

describe('a kills file', () => {
  it('may be empty, `kills:` with nothing, or `kills: {}`: no flag is killed', () => {
    expect(validateDocument('kills', {})).toEqual([]);
    expect(validateDocument('kills', { kills: null })).toEqual([]);
    expect(validateDocument('kills', { kills: {} })).toEqual([]);
  });

  it('maps flag keys to killedAt, killedBy and an optional reason', () => {
    expect(validateDocument('kills', { kills: { 'checkout-v2': kill(), search: kill({ reason: 'timeouts' }) } })).toEqual([]);
  });

  it('requires killedAt and killedBy on each entry', () => {
    expect(validateDocument('kills', { kills: { 'checkout-v2': {} } })).toEqual([
      { path: '/kills/checkout-v2/killedAt', message: 'is required' },
      { path: '/kills/checkout-v2/killedBy', message: 'is required' },
    ]);
  });

  it('refuses a killedAt that is not an ISO date-time', () => {
    expect(validateDocument('kills', { kills: { x: kill({ killedAt: 'now' }) } })).toEqual([
      { path: '/kills/x/killedAt', message: 'must be an ISO 8601 date-time such as 2024-05-01T12:00:00Z' },
    ]);
  });

  it('refuses a key that cannot be a flag key', () => {
    expect(validateDocument('kills', { kills: { 'bad key': kill() } })).toEqual([
      { path: '/kills/bad key', message: expect.stringMatching(/^this key must be 1 to 128 letters/) },
    ]);
  });

  it('refuses unknown fields at the top and in entries', () => {
    expect(validateDocument('kills', { killed: {}, kills: { x: kill({ by: 'me' }) } })).toEqual([
      { path: '/killed', message: 'is not an allowed field' },
      { path: '/kills/x/by', message: 'is not an allowed field' },
    ]);
  });
});
