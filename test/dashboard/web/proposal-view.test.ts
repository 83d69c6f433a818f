import { describe, expect, it } from 'vitest';
import { type Proposal, proposalSubject } from '../../../packages/dashboard/src/proposals/proposal-view.js';

const base = { id: 'p1', status: 'open', projectSlug: 'shop', flagKey: 'f2', fromEnvironment: null } as unknown as Proposal;

describe('where a proposal acts, in the words of the Proposals page', () => {
  it('names the environment of a config change, and its source for a promotion', () => {
    expect(proposalSubject({ ...base, environment: 'prod' })).toBe('shop/f2 in prod');
    expect(proposalSubject({ ...base, environment: 'prod', fromEnvironment: 'staging' })).toBe('shop/f2 in prod (from staging)');
  });

  it('says an archive acts in every environment, never "in null"', () => {
    expect(proposalSubject({ ...base, action: 'flag_archive', environment: null } as unknown as Proposal)).toBe(
      'shop/f2 in every environment',
    );
  });
});
