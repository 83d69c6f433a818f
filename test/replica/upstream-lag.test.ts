import { describe, expect, it } from 'vitest';
import { EnvironmentView } from '../../src/apps/eval-server/environment-view.js';
import { compareWithServed } from '../../src/apps/replica/upstream-lag.js';

const view = (projectId: string, environment: 'dev' | 'prod', version: number) =>
  EnvironmentView.build('acme', projectId, projectId, environment, {}, { kills: {} }, version, null);
const offer = (projectId: string, environment: 'dev' | 'prod', version: number) => ({
  projectId,
  projectSlug: projectId,
  environment,
  version,
});

describe('what an upstream offers, compared with what a replica serves', () => {
  const served = [view('shop', 'prod', 7), view('shop', 'dev', 3), view('blog', 'prod', 5)];

  it('is behind on an environment it offers at a lower version, and not on one at the same or a higher one', () => {
    const listing = {
      org: 'acme',
      head: { commit: 'c9', height: 9 },
      snapshots: [offer('shop', 'prod', 6), offer('shop', 'dev', 4), offer('blog', 'prod', 5)],
    };
    expect(compareWithServed(listing, served)).toEqual({
      behind: [{ projectId: 'shop', project: 'shop', environment: 'prod', served: 7, offered: 6 }],
      deleted: [],
    });
  });

  it('deleted what it does not list when its head is at least as high as the version served, and has not seen it yet otherwise', () => {
    const listing = { org: 'acme', head: { commit: 'c6', height: 6 }, snapshots: [offer('shop', 'dev', 3)] };
    const { behind, deleted } = compareWithServed(listing, served);
    expect(behind).toEqual([{ projectId: 'shop', project: 'shop', environment: 'prod', served: 7, offered: null }]);
    expect(deleted.map((v) => `${v.projectId}/${v.environment}`)).toEqual(['blog/prod']);
    expect(compareWithServed({ org: 'acme', head: null, snapshots: [] }, served).deleted).toEqual([]);
  });

  it('trusts a control plane that predates the head as before: what it does not list is deleted', () => {
    const { behind, deleted } = compareWithServed({ org: 'acme', snapshots: [] }, served);
    expect(behind).toEqual([]);
    expect(deleted).toHaveLength(3);
  });
});
