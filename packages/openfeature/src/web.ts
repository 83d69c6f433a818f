/** @flagops/openfeature/web: the OpenFeature web provider, for browsers, evaluating locally. */
import { type ClientOptions, createClient, type LocalClient } from '@flagops/sdk';
import {
  type EvaluationContext,
  type JsonValue,
  OpenFeatureEventEmitter,
  type Provider,
  ProviderEvents,
  type ResolutionDetails,
} from '@openfeature/web-sdk';
import { FlagopsProviderBase, toFlagopsContext, toResolution } from './provider-base.js';

export { toFlagopsContext };

/** The SDK's options in local mode (the provider makes and owns the client), or a local-mode client of yours. */
export type FlagopsWebProviderOptions = (ClientOptions & { mode?: 'local' }) | { client: LocalClient };

function localClient(options: FlagopsWebProviderOptions): LocalClient {
  if ('client' in options) {
    if (options.client.mode !== 'local') throw new TypeError('flagops: the web provider needs a local-mode client');
    return options.client;
  }
  if ((options as ClientOptions).mode === 'remote') throw new TypeError('flagops: the web provider evaluates locally; remove mode: remote');
  return createClient({ ...options, mode: 'local' });
}

/**
 * An OpenFeature web provider (@openfeature/web-sdk). The web SDK resolves flags synchronously, so this
 * provider evaluates locally from the snapshot: a context change needs no request, and every flag is
 * resolved for whatever context the application has set.
 */
export class FlagopsWebProvider extends FlagopsProviderBase<LocalClient, ProviderEvents> implements Provider {
  readonly runsOn = 'client' as const;
  readonly events = new OpenFeatureEventEmitter();

  constructor(options: FlagopsWebProviderOptions) {
    super(localClient(options), !('client' in options), ProviderEvents);
  }

  resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, context: EvaluationContext): ResolutionDetails<boolean> {
    return toResolution(this.client.details(flagKey, defaultValue, toFlagopsContext(context)));
  }

  resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext): ResolutionDetails<string> {
    return toResolution(this.client.details(flagKey, defaultValue, toFlagopsContext(context)));
  }

  resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext): ResolutionDetails<number> {
    return toResolution(this.client.details(flagKey, defaultValue, toFlagopsContext(context)));
  }

  resolveObjectEvaluation<T extends JsonValue>(flagKey: string, defaultValue: T, context: EvaluationContext): ResolutionDetails<T> {
    // details() widens a literal default's type (false → boolean); an object type is left as it is.
    return toResolution(this.client.details(flagKey, defaultValue, toFlagopsContext(context))) as ResolutionDetails<T>;
  }
}
