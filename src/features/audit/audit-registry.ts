import { join } from 'node:path';
import { InvalidInputError } from '../../foundations/errors/kinds.js';
import { type Logger, silentLogger } from '../../foundations/log/logger.js';
import type { PushLog } from '../../foundations/state/index.js';
import { ORG_NAME } from '../../foundations/storage/index.js';
import { AuditIndex, type AuditSource } from './audit-index.js';

export interface AuditRegistryOptions {
  repos: { get(org: string): Promise<AuditSource> };
  logger?: Logger;
  /** Keep each organisation's index between restarts as `<cacheDir>/<org>.json` (e.g. `<dataDir>/state/audit`). */
  cacheDir?: string;
  /** Who pushed which commit over git over HTTP. */
  pushes?: PushLog;
}

/** One AuditIndex per organisation, built on first use; concurrent first calls share the one build. */
export class AuditRegistry {
  private readonly indexes = new Map<string, Promise<AuditIndex>>();
  private readonly logger: Logger;

  constructor(private readonly options: AuditRegistryOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  get(org: string): Promise<AuditIndex> {
    let index = this.indexes.get(org);
    if (!index) {
      index = this.open(org);
      this.indexes.set(org, index);
      // A failed build is not remembered: the next call tries again.
      const failed = index;
      failed.catch(() => {
        if (this.indexes.get(org) === failed) this.indexes.delete(org);
      });
    }
    return index;
  }

  private async open(org: string): Promise<AuditIndex> {
    const repo = await this.options.repos.get(org);
    const { cacheDir, pushes } = this.options;
    // The name becomes a file name: the same rule as for the repository's directory.
    if ((cacheDir !== undefined || pushes !== undefined) && !ORG_NAME.test(org)) {
      throw new InvalidInputError(`organisation name ${JSON.stringify(org)} must match ${ORG_NAME.source}`, 'org');
    }
    const cacheFile = cacheDir === undefined ? undefined : join(cacheDir, `${org}.json`);
    return AuditIndex.open({ repo, cacheFile, pushes: pushes?.reader(org), logger: this.logger.child({ org, component: 'audit' }) });
  }

  /**
   * Stops following every organisation (an index still being built is closed once it is) and resolves once
   * every cache write has finished, so a clean stop leaves nothing half-written.
   */
  async closeAll(): Promise<void> {
    const opened = [...this.indexes.values()];
    this.indexes.clear();
    await Promise.all(
      opened.map((index) =>
        index.then(
          (i) => i.close(),
          () => {},
        ),
      ),
    );
  }
}
