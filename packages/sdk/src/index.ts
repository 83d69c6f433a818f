/**
 * @flagops/sdk, the flagops client SDK. Runs unchanged in Node 20 and browsers: it uses fetch, AbortController,
 * TextDecoder and timers, nothing Node-only, and evaluates with the same core as the server (@flagops/core).
 */
import { LocalClient } from './local-client.js';
import { resolveOptions } from './options.js';
import { RemoteClient } from './remote-client.js';
import type { ClientOptions } from './types.js';

export { silentSdkLogger } from './options.js';
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
export type { LocalClient, RemoteClient };
export type FlagopsClient = LocalClient | RemoteClient;

/**
 * A flagops client. Local mode (the default) answers the getters synchronously from the snapshot; remote mode
 * returns promises. It starts loading at once: `await client.ready()` to wait for the first snapshot.
 */
export function createClient(options: ClientOptions & { mode: 'remote' }): RemoteClient;
export function createClient(options: ClientOptions & { mode?: 'local' }): LocalClient;
export function createClient(options: ClientOptions): FlagopsClient;
export function createClient(options: ClientOptions): FlagopsClient {
  const resolved = resolveOptions(options);
  return resolved.mode === 'remote' ? new RemoteClient(resolved) : new LocalClient(resolved, options.bootstrap);
}
