import type { ClientStatus, FlagopsClient } from '../sdk/index.js';

/** The four provider events flagops sends; the server and the web SDK spell them alike but type them apart. */
export interface ProviderEventNames<E> {
  Ready: E;
  Error: E;
  Stale: E;
  ConfigurationChanged: E;
}

/** A type, not an interface: OpenFeature's event context wants an index signature, which only types get implicitly. */
export type ProviderEventDetails = {
  message?: string;
  flagsChanged?: string[];
  metadata?: Record<string, number>;
};

const recovering = (previous: ClientStatus) => previous === 'stale' || previous === 'error';

/**
 * Forwards the client's events as OpenFeature provider events: a change is ConfigurationChanged (with the
 * keys), `stale` and `error` are Stale and Error, and `ready` after one of them is Ready again. Nothing is
 * forwarded before initialize() has settled: until then the SDK's own Ready or Error (from initialize) speaks.
 * Returns how to stop forwarding.
 */
export function forwardClientEvents<E>(
  client: Pick<FlagopsClient, 'on'>,
  emit: (event: E, details: ProviderEventDetails) => void,
  names: ProviderEventNames<E>,
  initialized: () => boolean,
): () => void {
  const offChange = client.on('change', ({ keys, version }) => {
    if (initialized()) emit(names.ConfigurationChanged, { flagsChanged: keys, metadata: { version } });
  });
  const offStatus = client.on('status', ({ status, previous, error }) => {
    if (!initialized()) return;
    const message = error ?? `the flagops client is ${status}`;
    if (status === 'stale') emit(names.Stale, { message });
    else if (status === 'error') emit(names.Error, { message });
    else if (status === 'ready' && recovering(previous)) emit(names.Ready, { message });
  });
  return () => {
    offChange();
    offStatus();
  };
}
