import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import type { Config } from '../../src/foundations/config/config.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { type Service, startService } from '../../src/service.js';
import { freePort } from '../helpers/free-port.mjs';

export { freePort };

/** The whole service on a control port that survives stop() and start(), for outage tests. */
export async function fixedPortService() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-upstream-'));
  const admin = generateKey('admin');
  const config: Config = {
    dataDir,
    host: '127.0.0.1',
    controlPort: await freePort(),
    evalPort: 0,
    bootstrapKeys: [{ org: 'acme', key: admin }],
    planProjectLimit: 25,
    logLevel: 'error',
  };
  let service: Service | null = await startService(config, silentLogger);
  return {
    admin,
    controlUrl: service.controlUrl,
    get service(): Service {
      if (!service) throw new Error('stopped');
      return service;
    },
    async stop() {
      await service?.stop();
      service = null;
    },
    async start() {
      service = await startService(config, silentLogger);
    },
    async destroy() {
      await service?.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
