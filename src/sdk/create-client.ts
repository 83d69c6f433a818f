import { LocalClient } from './local-client.js';
import { resolveOptions } from './options.js';
import { RemoteClient } from './remote-client.js';
import type { ClientOptions } from './types.js';

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
