import type { IncomingMessage } from 'node:http';
import type { AuditRegistry } from '../../features/audit/audit-registry.js';
import type { FlagHealthService } from '../../features/health/flag-health-service.js';
import type { KillSwitch } from '../../features/kill/kill-switch.js';
import type { EvaluationCounter } from '../../features/stats/evaluation-counter.js';
import type { TriggerService } from '../../features/triggers/trigger-service.js';
import type { KeyService } from '../../foundations/auth/key-service.js';
import type { Logger } from '../../foundations/log/logger.js';
import type { GuardStore } from '../../foundations/state/index.js';
import type { RepositoryRegistry } from '../../foundations/storage/index.js';
import type { SnapshotHolder } from '../eval-server/snapshot-holder.js';
import type { PrincipalResolver } from './principal-resolvers.js';

/** Everything the control plane's routes and services are given by the composition root (src/service.ts). */
export interface ControlPlaneDeps {
  keys: KeyService;
  repos: RepositoryRegistry;
  holder: SnapshotHolder;
  killSwitch: KillSwitch;
  counter: EvaluationCounter;
  /** The audit trail of each organisation, read from main's git log. */
  audit: AuditRegistry;
  logger: Logger;
  /** Stale-flag detection: each organisation's flag history with the evaluation counts. */
  flagHealth: FlagHealthService;
  planProjectLimit: number;
  /** Trigger URLs (hashed secrets) of every organisation. */
  triggers: TriggerService;
  health: (req: IncomingMessage) => { status: number; body: unknown };
  clock?: () => Date;
  /** Whether guards on scheduled steps can be checked (FLAGOPS_PROMETHEUS_URL is set); a guard is refused otherwise. */
  guardsAvailable?: boolean;
  /** The last check of each guarded schedule (GET .../guard-check). */
  guardChecks?: GuardStore;
  /**
   * Extra ways to authenticate a request that carries no `Authorization` header, tried in order (the
   * dashboard's session cookie plugs in here). Bearer keys are always accepted.
   */
  principalResolvers?: readonly PrincipalResolver[];
  /**
   * Why changes are refused now (the shared database cannot be reached), as the error to answer with; kills
   * are never refused for it.
   */
  writesRefused?: () => Error | undefined;
  /**
   * Remote mode: brings the organisation's main up to the git remote now; true once it holds the remote's head. A request
   * refused as not found or as a version conflict is answered again after it, so a change made through another
   * control plane a moment ago is seen here even before its notice arrives.
   */
  catchUp?: (org: string) => Promise<boolean>;
}
