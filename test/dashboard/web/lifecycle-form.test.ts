import { describe, expect, it } from 'vitest';
import { lifecycleFields, lifecyclePatch, lifecycleText, newLifecycle } from '../../../packages/dashboard/src/logic/lifecycle-form.js';

describe('the lifecycle form of the dashboard', () => {
  it('shows a lifecycle in words, or that the flag has none', () => {
    expect(lifecycleText({ type: 'experiment', owner: 'team-checkout', expiresAt: '2027-03-31' })).toBe(
      'experiment flag · owner team-checkout · expires 2027-03-31',
    );
    expect(lifecycleText({ type: 'kill-switch' })).toBe('kill-switch flag · no owner · no expiry');
    expect(lifecycleText(undefined)).toBe('No lifecycle set: type, owner and expiry unknown.');
  });

  it('creates a flag with no lifecycle while every field is empty, else with the fields given', () => {
    expect(newLifecycle({ type: '', owner: ' ', expiresAt: '' })).toBeUndefined();
    expect(newLifecycle({ type: '', owner: 'team-a', expiresAt: '' })).toEqual({ owner: 'team-a' });
    expect(newLifecycle({ type: 'experiment', owner: '', expiresAt: ' 2027-03-31 ' })).toEqual({
      type: 'experiment',
      expiresAt: '2027-03-31',
    });
  });

  it('sends only what changed, an emptied field as null, and nothing when nothing changed', () => {
    const current = { type: 'experiment' as const, owner: 'team-a', expiresAt: '2027-03-31' };
    expect(lifecyclePatch(current, lifecycleFields(current))).toBeUndefined();
    expect(lifecyclePatch(current, { type: 'release', owner: 'team-a', expiresAt: '2027-03-31' })).toEqual({ type: 'release' });
    expect(lifecyclePatch(current, { type: 'experiment', owner: 'team-b', expiresAt: '' })).toEqual({ owner: 'team-b', expiresAt: null });
  });

  it('gives a flag without a lifecycle one on the first save, type release by default', () => {
    expect(lifecycleFields(undefined)).toEqual({ type: 'release', owner: '', expiresAt: '' });
    expect(lifecyclePatch(undefined, lifecycleFields(undefined))).toEqual({ type: 'release' });
    expect(lifecyclePatch(undefined, { type: 'operational', owner: 'sre', expiresAt: '' })).toEqual({ type: 'operational', owner: 'sre' });
  });
});
