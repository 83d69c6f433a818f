import { describe, expect, it } from 'vitest';
import { hrefOf, parseHash, type View } from '../../../packages/dashboard/src/route.js';

describe('hash routes', () => {
  it('reads every view from its hash and writes it back', () => {
    const views: View[] = [
      { name: 'projects' },
      { name: 'flags', projectId: 'prj_1' },
      { name: 'flag', flagId: 'flg_1', env: 'staging' },
      { name: 'flag-by-key', projectSlug: 'shop', key: 'checkout.v2' },
      { name: 'audit', filters: {} },
      { name: 'audit', filters: { projectId: 'prj_1', flagId: 'flg_1', environment: 'prod', action: 'kill' } },
      { name: 'keys' },
    ];
    for (const view of views) expect(parseHash(hrefOf(view))).toEqual(view);
  });

  it('opens the projects on an empty hash and prod on a flag without environment', () => {
    expect(parseHash('')).toEqual({ name: 'projects' });
    expect(parseHash('#/flags/flg_1')).toEqual({ name: 'flag', flagId: 'flg_1', env: 'prod' });
  });

  it('names anything else not found', () => {
    for (const hash of ['#/flags/flg_1/qa', '#/nope', '#/projects/a/b']) expect(parseHash(hash)).toEqual({ name: 'not-found', hash });
  });
});
