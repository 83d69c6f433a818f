import { ENVIRONMENTS } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { coldRepository as cold, configYaml, type Files, flagYaml, commitHistory as history, projectYaml } from './helpers.js';

// An invalid segment holds back its project; a segment change changes every environment of its project.

const segment = (ids: string[]) => `key: beta\nuserIds: [${ids.join(', ')}]\n`;
const IN_BETA = 'rules:\n  - id: b\n    serve: "on"\n    conditions:\n      - op: in_segment\n        value: beta\n';

function seed(): Files {
  const files: Files = { [layout.projectFile('shop')]: projectYaml('shop'), [layout.segmentFile('shop', 'beta')]: segment(['ana']) };
  for (const key of ['a', 'b']) {
    files[layout.flagFile('shop', key)] = flagYaml(key, `flg_${key}`);
    for (const env of ENVIRONMENTS)
      files[layout.configFile('shop', env, key)] = configYaml({ enabled: true, rolloutPct: 0, version: 1 }).replace(
        'rules: []\n',
        key === 'a' ? IN_BETA : 'rules: []\n',
      );
  }
  return files;
}

describe('segments in what a commit serves', () => {
  it('are served with their project, and a change to one changes every environment', async () => {
    const { gitdir, oids } = await history([seed(), { [layout.segmentFile('shop', 'beta')]: segment(['ana', 'bo']) }]);
    const repo = await cold(gitdir);
    const served = await repo.readServed();
    expect(served.issues).toEqual([]);
    expect(served.state.projects.get('shop')!.segments!.get('beta')!.userIds).toEqual(['ana', 'bo']);
    expect([...(await repo.servedChanges(oids[1], 'shop'))]).toEqual(['dev', 'staging', 'prod']);
  });

  it('an invalid segment holds back its project, which serves its last valid state, segments included', async () => {
    const { gitdir, oids } = await history([
      seed(),
      { [layout.segmentFile('shop', 'beta')]: segment(['ana', 'bo']) },
      { [layout.segmentFile('shop', 'beta')]: 'key: beta\nuserIds: [1, 2]\n' },
      { [layout.configFile('shop', 'prod', 'b')]: configYaml({ enabled: true, rolloutPct: 50, version: 2 }) },
    ]);
    const served = await (await cold(gitdir)).readServed();
    expect([...served.heldProjects.keys()]).toEqual(['shop']);
    const shop = served.state.projects.get('shop')!;
    expect(shop.segments!.get('beta')!.userIds).toEqual(['ana', 'bo']);
    // Held back whole: b's later change waits for the segment to be fixed.
    expect(shop.flags.get('b')!.environments.prod.rolloutPct).toBe(0);
    expect(served.issues.map((i) => `${i.file} ${i.path}: ${i.message}`)).toEqual([
      'projects/shop/segments/beta.yaml /userIds/0: must be a string',
      'projects/shop/segments/beta.yaml /userIds/1: must be a string',
    ]);
    expect(oids).toHaveLength(4);
  });

  it('a flag naming a segment that is gone is held back alone, serving its last valid state', async () => {
    const { gitdir } = await history([seed(), { [layout.segmentFile('shop', 'beta')]: null }]);
    const served = await (await cold(gitdir)).readServed();
    expect([...served.heldProjects.keys()]).toEqual([]);
    expect([...served.heldFlags.keys()]).toEqual(['shop/a']);
    const shop = served.state.projects.get('shop')!;
    expect([...shop.flags.keys()]).toEqual(['a', 'b']);
    expect(shop.flags.get('a')!.environments.prod.rules[0].conditions).toEqual([{ op: 'in_segment', value: 'beta' }]);
  });
});
