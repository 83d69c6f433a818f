import { describe, expect, it } from 'vitest';
import { SnapshotHolder } from '../../src/apps/eval-server/snapshot-holder.js';
import { servedViews } from '../../src/apps/replica/upstream/replica-views.js';
import { toHttpError } from '../../src/foundations/errors/http-status.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { RepositoryRegistry } from '../../src/foundations/storage/index.js';
import { stateIn } from '../helpers/control-state.js';
import { seedShop, tempDir } from '../storage/helpers.js';

describe('the control plane while it starts, as replicas see it', () => {
  it('answers 503 instead of an empty listing, which would make replicas drop every view they serve', async () => {
    const dataDir = tempDir();
    const repos = new RepositoryRegistry({ dataDir, trust: (await stateIn(dataDir)).commitTrust, watch: false });
    const holder = new SnapshotHolder(silentLogger);
    try {
      const repo = await repos.get('acme');
      await seedShop(repo);
      // Listening already, but the organisation is not served yet (service.ts adds it after listening).
      const refused = await servedViews('acme', repos, holder).catch((err: unknown) => err);
      expect(toHttpError(refused)).toMatchObject({ status: 503, body: { error: { code: 'unavailable' } } });

      await holder.add('acme', repo);
      const views = await servedViews('acme', repos, holder);
      expect(views.map((v) => v.environment).sort()).toEqual(['dev', 'prod', 'staging']);
    } finally {
      holder.close();
      await repos.closeAll();
    }
  });
});
