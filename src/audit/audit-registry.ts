import { join } from 'node:path';
import { InvalidInputError } from '../errors/kinds.js';
import { type Logger, silentLogger } from '../log/logger.js';
import { ORG_NAME } from '../storage/index.js';
import { AuditIndex, type AuditSource } from './audit-index.js';
import { pushLogPath } from './push-log.js';

export interface AuditRegistryOptions {
  repos: { get(org: string): Promise<AuditSource> };
  logger?: Logger;
  /** Keep each organisation's index between restarts as `<cacheDir>/<org>.json` (e.g. `<dataDir>/state/audit`). */
  cacheDir?: string;
  /** Where git over HTTP records who pushed what, `<pushLogDir>/<org>.jsonl` (e.g. `<dataDir>/state/pushes`). */
  pushLogDir?: string;
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
    const { cacheDir, pushLogDir } = this.options;
    // The name becomes a file name: the same rule as for the repository's directory.
    if ((cacheDir !== undefined || pushLogDir !== undefined) && !ORG_NAME.test(org)) {
      throw new InvalidInputError(`organisation name ${JSON.stringify(org)} must match ${ORG_NAME.source}`, 'org');
    }
    const cacheFile = cacheDir === undefined ? undefined : join(cacheDir, `${org}.json`);
    const pushLogFile = pushLogDir === undefined ? undefined : pushLogPath(pushLogDir, org);
    return AuditIndex.open({ repo, cacheFile, pushLogFile, logger: this.logger.child({ org, component: 'audit' }) });
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
