import type { KeyService } from '../auth/key-service.js';
import type { SnapshotHolder } from '../eval-server/snapshot-holder.js';
import type { KillSwitch } from '../kill/kill-switch.js';
import type { Logger } from '../log/logger.js';
import type { EvaluationCounter } from '../stats/evaluation-counter.js';
import type { RepositoryRegistry } from '../storage/repository-registry.js';

/** Everything the control plane's routes and services are given by the composition root (src/service.ts). */
export interface ControlPlaneDeps {
  keys: KeyService;
  repos: RepositoryRegistry;
  holder: SnapshotHolder;
  killSwitch: KillSwitch;
  counter: EvaluationCounter;
  logger: Logger;
  planProjectLimit: number;
  health: () => { status: number; body: unknown };
  clock?: () => Date;
}
