/**
 * The flagops client SDK (docs/sdk.md). Runs unchanged in Node 20 and browsers: it uses fetch, AbortController,
 * TextDecoder and timers, nothing Node-only, and evaluates with the same core as the server.
 */
export { createClient, type FlagopsClient, type LocalClient, type RemoteClient } from './create-client.js';
export { silentSdkLogger } from './logger.js';
export type {
  ChangeEvent,
  ClientEvents,
  ClientOptions,
  ClientStatus,
  EvaluationContext,
  EvaluationDetails,
  EvaluationErrorCode,
  FetchFunction,
  JsonValue,
  Reason,
  Scheduler,
  SdkLogger,
  Snapshot,
  StatusEvent,
} from './types.js';
